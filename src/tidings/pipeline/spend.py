"""The spend ledger of paid APIs and their daily budgets (R-SCHED-3).

Providers are settings (``[providers.NAME]``: base URL, key, daily budget in
calls and/or money, price per call). Every call a reader makes to one goes
through :meth:`Ledger.call`: before anything is sent, the day's recorded calls,
the calls still in flight and this one are held against the budget, and a call
that would pass it is not made (:class:`BudgetExhaustedError`: the sources it
was for end with the budget outcome, which is not a failure of theirs and is
tried again in 15 minutes). After the call, it is recorded - provider, purpose,
sources, status, cost, duration - whatever its outcome, because a failed call
may still be billed.

A provider-wide problem (a refused key, no balance, rate limited, down:
:class:`ProviderError` raised out of a call) is kept as the provider's trouble:
logged once when it starts, shown with the day's spend, and until the time it
names no further call to that provider is sent - every source that wanted one
ends with the same budget-like outcome instead of one more failing request each.
The trouble is stored with the call that met it, like the spend: a second
``tidings collect`` seconds after a 429 holds back as the first does, and the
next command still shows why the sources wait, until a call succeeds again.

Days are local days (the ``timezone`` setting): a budget is a person's budget.
Several processes on one archive share the recorded calls; only the calls in
flight at the same instant in two processes can pass a budget together (on
PostgreSQL, a call numbered before but committed after one this process has
already counted stays uncounted here until the day's total starts again).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from tidings.errors import BudgetExhaustedError, ConfigError, ProviderError
from tidings.model import PaidCall, ProviderTrouble, Spend
from tidings.readers.base import CallNote
from tidings.readers.options import Provider
from tidings.store.spend import SpendReads, SpendWrites
from tidings.store.writer import Writer

log = logging.getLogger(__name__)

#: how long a provider's trouble stops calls when it names no time of its own (a bad key)
TROUBLE_PAUSE = timedelta(minutes=15)


class _ProviderSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    base_url: Annotated[StrictStr, Field(pattern=r"^https?://")]
    api_key: StrictStr = ""
    daily_calls: Annotated[int, Field(ge=0)] | None = None
    daily_cost: Annotated[float, Field(ge=0)] | None = None
    cost_per_call: Annotated[float, Field(ge=0)] = 0.0
    direct: StrictBool = True


def parse_providers(raw: Mapping[str, Any]) -> dict[str, Provider]:
    """The ``providers`` setting, checked; ConfigError naming the provider and key."""
    out: dict[str, Provider] = {}
    for name, table in raw.items():
        if not isinstance(table, Mapping):
            raise ConfigError(f"setting providers.{name}: expected a table "
                              "(base_url, api_key, daily_calls, daily_cost, cost_per_call)")
        try:
            p = _ProviderSettings.model_validate(dict(table))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in ("providers", name, *first["loc"]))
            raise ConfigError(f"setting {where}: {first['msg']}") from None
        out[name] = Provider(name, p.base_url.rstrip("/"), p.api_key, p.daily_calls,
                             p.daily_cost, p.cost_per_call, p.direct)
    return out


#: a provider's trouble (kept in storage: every process holds back alike)
Trouble = ProviderTrouble


@dataclass(slots=True)
class _InFlight:
    calls: int = 0
    cost: float = 0.0


def _reason(exc: BaseException) -> str:
    text = str(exc)
    return text.splitlines()[0][:200] if text else type(exc).__name__


def _added(a: Mapping[str, Spend], b: Mapping[str, Spend]) -> dict[str, Spend]:
    out = dict(a)
    for name, s in b.items():
        was = out.get(name, Spend())
        out[name] = Spend(was.calls + s.calls, was.cost + s.cost)
    return out


def _record(unit: SpendWrites, call: PaidCall, trouble: ProviderTrouble | None) -> None:
    """The call, and what it says of its provider: a trouble kept, or one ended."""
    unit.record_paid_call(call)
    if trouble is not None:
        unit.set_paid_trouble(trouble)
    elif call.status == "ok":
        unit.clear_paid_trouble(call.provider)


class Ledger:
    """:class:`~tidings.readers.base.PaidCalls` on top of storage and the writer."""

    def __init__(self, providers: Mapping[str, Provider], store: SpendReads, writer: Writer,
                 clock: Callable[[], datetime], tz: tzinfo) -> None:
        self._providers = dict(providers)
        self._store = store
        self._writer = writer
        self._clock = clock
        self._tz = tz
        self._in_flight: dict[str, _InFlight] = {}
        #: troubles met by calls still being recorded: held at once, before storage has them
        self._trouble: dict[str, Trouble] = {}
        self._day: datetime | None = None  # the local midnight _spent counts from
        self._spent: dict[str, Spend] = {}
        self._counted = 0  # the number of the last recorded call in _spent
        self._recording = 0  # calls of ours being written to the ledger
        self._unread: dict[str, Spend] = {}  # ours recorded since the store was last read

    def provider(self, name: str) -> Provider:
        try:
            return self._providers[name]
        except KeyError:
            raise ConfigError(f"paid API {name!r} is not configured (add [providers.{name}] "
                              "with base_url and api_key to tidings.toml)") from None

    def today(self) -> Mapping[str, Spend]:
        """Calls and cost per provider since local midnight.

        Asked before every paid call, so the day's total is kept and only the calls
        recorded since (by any process) are added: summing the whole day again
        each time grew with the day's calls.
        """
        midnight = self._midnight()
        if midnight != self._day:
            self._day, self._spent, self._counted, self._unread = midnight, {}, 0, {}
        if self._recording:
            # a call of ours may be stored already and still counted in flight: the
            # store is read again once none is, and until then our recorded calls
            # count from memory, so that each counts once, never twice
            return _added(self._spent, self._unread)
        self._unread = {}
        more, self._counted = self._store.spend_after(midnight, self._counted)
        self._spent = _added(self._spent, more)
        return dict(self._spent)

    def by_day(self, days: int = 7) -> dict[str, dict[str, Spend]]:
        """Calls and cost per local day (ISO date, newest first) and provider."""
        out: dict[str, dict[str, Spend]] = {}
        start = self._midnight()
        later: Mapping[str, Spend] = {}
        for _ in range(max(1, days)):
            since = self._store.spend_since(start)
            day = {name: Spend(s.calls - later.get(name, Spend()).calls,
                               round(s.cost - later.get(name, Spend()).cost, 6))
                   for name, s in since.items()}
            out[start.date().isoformat()] = {k: v for k, v in day.items() if v.calls}
            later = since
            start = (start - timedelta(hours=12)).replace(hour=0)  # the day before, local
        return out

    def troubles(self) -> Mapping[str, Trouble]:
        """The providers in trouble (reported once each, not per source) until a call
        to them succeeds again: stored, so any process on the archive sees them."""
        return {**self._store.paid_troubles(), **self._trouble}

    def _known(self, provider: str) -> Trouble | None:
        """The provider's trouble: one this process is recording now, else the stored
        one (noted here or by another process, an earlier command)."""
        return self._trouble.get(provider) or self._store.paid_troubles().get(provider)

    def _cleared(self, provider: str) -> None:
        if self._known(provider) is not None:
            log.info("paid API %s answers again", provider)
        self._trouble.pop(provider, None)

    def _note_trouble(self, exc: ProviderError) -> Trouble:
        now = self._clock()
        until = exc.retry_after if exc.retry_after and exc.retry_after > now else None
        known = self._known(exc.provider)
        if known is None or known.reason != str(exc):
            log.warning("paid API trouble: %s", exc)  # once, until a call succeeds again
            since = now
        else:
            since = known.since
        trouble = Trouble(exc.provider, str(exc), since, until or now + TROUBLE_PAUSE)
        self._trouble[exc.provider] = trouble
        return trouble

    @asynccontextmanager
    async def call(self, provider: str, purpose: str, source_ids: Sequence[str]
                   ) -> AsyncIterator[CallNote]:
        p = self.provider(provider)
        self._check(p)
        flight = self._in_flight.setdefault(p.name, _InFlight())
        flight.calls += 1
        flight.cost += p.cost_per_call
        note, at, started = CallNote(), self._clock(), time.monotonic()
        trouble: Trouble | None = None
        try:
            yield note
            if note.status == "ok":
                self._cleared(p.name)
        except BaseException as exc:
            if isinstance(exc, ProviderError):
                trouble = self._note_trouble(exc)
            if note.status == "ok":
                note.status = f"failed: {_reason(exc)}"
            raise
        finally:
            call = PaidCall(p.name, purpose, tuple(source_ids), note.status,
                            p.cost_per_call if note.cost is None else note.cost,
                            int((time.monotonic() - started) * 1000), at)
            # in flight until recorded: released before, a call checked while the
            # writer stores it would see it nowhere, and two calls could pass the
            # budget together; meanwhile today() keeps its total (see there)
            self._recording += 1
            try:
                await asyncio.shield(self._writer(_record, call, trouble))
            finally:
                if trouble is not None and self._trouble.get(p.name) is trouble:
                    del self._trouble[p.name]  # stored now (or lost with the write)
                self._recording -= 1
                flight.calls -= 1
                flight.cost -= p.cost_per_call
                was = self._unread.get(p.name, Spend())
                self._unread[p.name] = Spend(was.calls + 1, was.cost + call.cost)

    def _check(self, p: Provider) -> None:
        trouble = self._known(p.name)
        if trouble is not None and trouble.until > self._clock():
            raise ProviderError(p.name, trouble.reason.removeprefix(f"{p.name}: ")
                                + " (no call sent until "
                                + f"{trouble.until:%H:%M} UTC)", trouble.until, sent=False)
        spent = self.today().get(p.name, Spend())
        flight = self._in_flight.get(p.name, _InFlight())
        calls = spent.calls + flight.calls + 1
        if p.daily_calls is not None and calls > p.daily_calls:
            raise BudgetExhaustedError(
                f"{p.name}: daily budget of {p.daily_calls} calls reached; "
                "tried again in 15 minutes")
        cost = spent.cost + flight.cost + p.cost_per_call
        if p.daily_cost is not None and cost > p.daily_cost + 1e-9:
            raise BudgetExhaustedError(
                f"{p.name}: daily budget of {p.daily_cost:g} reached "
                f"({spent.cost:g} spent today); tried again in 15 minutes")

    def _midnight(self) -> datetime:
        local = self._clock().astimezone(self._tz)
        return local.replace(hour=0, minute=0, second=0, microsecond=0)
