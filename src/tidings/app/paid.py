"""``Tidings.paid``: what the paid APIs cost and how they are doing (R-SCHED-3).

Days are local days of the ``timezone`` setting, as the daily caps count them.
"""

from __future__ import annotations

from collections.abc import Mapping

from tidings.app.core import Core
from tidings.model import PaidCall, Spend
from tidings.pipeline.spend import Trouble
from tidings.store.spend import SpendReads


class Paid:
    """See the module docstring."""

    def __init__(self, core: Core) -> None:
        self._store: SpendReads = core.store
        self._ledger = core.ledger

    def today(self) -> Mapping[str, Spend]:
        """Calls and cost of each paid API since local midnight."""
        return self._ledger.today()

    def calls(self, provider: str | None = None, limit: int = 100) -> list[PaidCall]:
        """The latest recorded calls to paid APIs, newest first."""
        return self._store.paid_calls(provider, limit=limit)

    def by_day(self, days: int = 7) -> dict[str, dict[str, Spend]]:
        """Calls and cost per local day (ISO date) and provider, the last ``days`` days."""
        return self._ledger.by_day(days)

    def troubles(self) -> Mapping[str, Trouble]:
        """Paid APIs with a provider-wide problem now (bad key, no balance, down)."""
        return self._ledger.troubles()
