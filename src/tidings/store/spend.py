"""The spend ledger of paid APIs (R-SCHED-3): every call recorded with its cost, and
the providers in trouble until a call to them succeeds again.

Part of the :class:`tidings.store.base.Storage` protocol, in its own module as
``ops`` is; ``tidings.pipeline.spend`` is its one user.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from tidings.model import PaidCall, ProviderTrouble, Spend


class SpendReads(Protocol):
    def spend_since(self, since: datetime) -> dict[str, Spend]:
        """Calls and cost per provider since ``since`` (providers with none are absent)."""
        ...

    def spend_after(self, since: datetime, after_id: int) -> tuple[dict[str, Spend], int]:
        """Calls and cost per provider since ``since`` among the calls recorded after
        the one numbered ``after_id``, and the number of the last one counted: a
        running day's total grows by the new calls only."""
        ...

    def paid_calls(self, provider: str | None = None, since: datetime | None = None,
                   limit: int = 100) -> list[PaidCall]:
        """Recorded calls, newest first."""
        ...

    def paid_troubles(self) -> dict[str, ProviderTrouble]:
        """The providers in trouble, by name (until a call to them succeeds again)."""
        ...


class SpendWrites(Protocol):
    def record_paid_call(self, call: PaidCall) -> None:
        """Keep one paid call (its time, purpose, sources, status and cost)."""
        ...

    def set_paid_trouble(self, trouble: ProviderTrouble) -> None:
        """Keep a provider's trouble, replacing the one it had."""
        ...

    def clear_paid_trouble(self, provider: str) -> None:
        """A call to ``provider`` succeeded: its trouble, if any, is over."""
        ...
