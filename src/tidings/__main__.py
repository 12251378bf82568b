"""``python -m tidings`` is the ``tidings`` command."""

from tidings.cli import main

main()
