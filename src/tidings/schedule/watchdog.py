"""The memory watchdog of long runs (R-OPS-4).

A feed reader that runs for weeks can creep upwards in memory (parser caches,
fragmentation). Rather than guess at every leak, ``serve`` watches its own
resident size; over the limit, the runner stops taking work, lets running
fetches finish, releases what it holds and the process replaces itself with a
fresh copy of the same command.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

import psutil

log = logging.getLogger(__name__)


def resident_mb() -> float:
    """This process's resident set size in MiB."""
    return float(psutil.Process().memory_info().rss) / (1024 * 1024)


@dataclass(slots=True)
class MemoryWatchdog:
    """Says when resident memory passed ``limit_mb`` (0 disables the check)."""

    limit_mb: float
    probe: Callable[[], float] = field(default=resident_mb)
    peak_mb: float = 0.0

    def exceeded(self) -> float | None:
        """The current size in MiB if it is over the limit, else None."""
        current = self.probe()
        self.peak_mb = max(self.peak_mb, current)
        if self.limit_mb > 0 and current > self.limit_mb:
            return current
        return None


def restart_in_place(argv: Sequence[str] | None = None) -> NoReturn:
    """Replace this process with a fresh run of the same command line (same pid).

    Called after a graceful stop: storage and sockets must already be closed.
    """
    args = list(argv) if argv is not None else list(sys.orig_argv[1:])
    log.warning("restarting: %s %s", sys.executable, " ".join(args))
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, *args])  # noqa: S606 - the same program, by design
