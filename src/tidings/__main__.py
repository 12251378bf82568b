"""``python -m tidings`` is the ``tidings`` command.

The guard matters: worker processes (the parsing pool) import the main module
again, and must not run the command a second time.
"""

from tidings.cli import main

if __name__ == "__main__":
    main()
