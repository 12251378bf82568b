"""What a source's state reads as to a person: its health, ``new``, or ``waiting``.

Health (R-SCHED-4) counts the source's own failures only, and a run stopped by
a paid API (our daily budget spent, the provider refusing the key or out of
balance: R-SCHED-3) rightly leaves it alone. Such a source was still not read,
and a green dot with "Last success never" hid that: while its last run ended
that way its state is ``waiting``, with the reason (amber in the reader), until
a run reads it or fails on its own account. Nothing is stored for it: the last
run says it already, so the CLI, the pages and the API all derive it here.
"""

from __future__ import annotations

from dataclasses import dataclass

from tidings.model import FetchRun, Health, RunOutcome, Source

WAITING = "waiting"
NEW = "new"
#: what the ledger adds to a reason when it held a call back; one trouble, one line
_HELD = " (no call sent until "


@dataclass(frozen=True, slots=True)
class SourceState:
    """``name``: new, ok, degraded, failing or waiting; ``reason`` for waiting."""

    name: str
    reason: str | None = None


def source_state(health: Health, last_outcome: str | None, last_reason: str | None, *,
                 never: bool) -> SourceState:
    """The state from a source's health and its last run (``never``: no run read it)."""
    if last_outcome == RunOutcome.BUDGET.value:
        return SourceState(WAITING, last_reason or "a paid API's budget or trouble")
    if never:
        return SourceState(NEW)
    return SourceState(health.value)


def state_of(source: Source, last: FetchRun | None) -> SourceState:
    """A stored source's state, ``last`` its latest run (None: never run)."""
    return source_state(source.health, last.outcome.value if last else None,
                        last.error if last else None,
                        never=source.last_success_at is None and not source.fail_count)


def trouble_line(reason: str) -> str:
    """A waiting reason without the time the ledger holds calls until: the sources
    held back and the one whose call was refused then read as one trouble."""
    return reason.split(_HELD, 1)[0]
