"""Who holds a lease, and taking over the leases of a process that died.

A claimed source is leased for ten minutes (``timing.LEASE_MIN``). Time alone
cannot tell a slow run from a dead one, so a lease also names its holder: host,
pid and the process's start time (the pid alone could be reused by another
program). Before every round, whoever starts it looks at the holders named on
this host; one whose process is gone (or whose pid now belongs to a younger
process) has its leases taken over at once and its runs closed as abandoned,
with the reason. Holders on other hosts cannot be checked from here: their
leases still run out by time, and runs older than twice the lease are closed
(``timing.stale_runs_before``).
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Protocol

import psutil

from tidings.pipeline import timing
from tidings.store.ops import OpsUnit
from tidings.store.runs import RunWrites

#: start times are compared to the second: psutil reports them as floats
_START_SLACK = 1.0


class Claiming(OpsUnit, RunWrites, Protocol):
    """What claiming sources in this process's name asks of storage: the dead holders'
    leases taken over, then the claim."""


@dataclass(frozen=True, slots=True)
class Holder:
    host: str
    pid: int
    started: float  # the process's start time, seconds since the epoch

    def __str__(self) -> str:
        return f"{self.host}/{self.pid}/{self.started:.2f}"

    @classmethod
    def parse(cls, text: str) -> Holder | None:
        parts = text.rsplit("/", 2)
        if len(parts) != 3 or not parts[0]:
            return None
        try:
            return cls(parts[0], int(parts[1]), float(parts[2]))
        except ValueError:
            return None


@cache
def this_process() -> Holder:
    """This process as a lease holder (the pid and start time do not change)."""
    pid = os.getpid()
    return Holder(platform.node(), pid, psutil.Process(pid).create_time())


def is_gone(holder: Holder) -> bool:
    """True only when ``holder`` ran on this host and is certainly not running now."""
    if holder.host != this_process().host:
        return False
    try:
        process = psutil.Process(holder.pid)
        started = process.create_time()
        if process.status() == psutil.STATUS_ZOMBIE:  # killed, not yet reaped by its parent
            return True
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:  # exists, but not ours to inspect: assume alive
        return False
    return abs(started - holder.started) > _START_SLACK


def _reason(holder: Holder) -> str:
    return (f"abandoned: the collecting process (pid {holder.pid} on {holder.host}) "
            "ended before this run finished")


STALE_REASON = (f"abandoned: no word from its process for {2 * timing.LEASE_MIN} minutes "
                "(it was stopped or died)")


def recover(unit: OpsUnit, now: datetime) -> int:
    """Take over the leases of dead holders and close runs left ``running``; one write
    step, run before claiming. Returns how many sources were freed."""
    freed = 0
    for text in unit.lease_holders():
        holder = Holder.parse(text)
        if holder is None or is_gone(holder):
            freed += unit.take_over_leases(text, now, _reason(holder) if holder else
                                           "abandoned: its lease named no process")
    unit.abandon_stale_runs(timing.stale_runs_before(now), now, STALE_REASON)
    return freed


def lease_name() -> str:
    """What this process writes as the holder of the leases it takes."""
    return str(this_process())
