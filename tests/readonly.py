"""Running tidings where it may not write, whoever runs the tests and wherever the
project was cloned.

As root (CI), permissions bind nobody, so the commands run as root without the
capabilities that override them (CAP_DAC_OVERRIDE: write anything, CAP_FOWNER:
chmod anything). They keep CAP_DAC_READ_SEARCH, so the interpreter, the venv and
the checkout stay readable wherever they live: running them as user ``nobody``
failed in a clone under a 0700 home directory. Another user is bound by the
permissions already and runs the commands as they are.
"""

from __future__ import annotations

import os
import shutil

_DROPPED = "-dac_override,-fowner"


def bound_by_permissions() -> list[str] | None:
    """The prefix that runs a command bound by file permissions ([] as an ordinary
    user), or None where that cannot be arranged (root without setpriv)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, f"--bounding-set={_DROPPED}", f"--inh-caps={_DROPPED}"]
