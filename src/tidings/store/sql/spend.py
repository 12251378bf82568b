"""The spend ledger: every call to a paid API, so that a day's budget is known
(R-SCHED-3), and each provider's trouble; one set of statements for both backends."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.model import PaidCall, ProviderTrouble, Spend
from tidings.store.sql._base import Connected, from_us, to_us

_COLUMNS = "provider, purpose, source_ids, status, cost, duration_ms, called_at"


def _call(row: Sequence[Any]) -> PaidCall:
    return PaidCall(provider=row[0], purpose=row[1], source_ids=tuple(json.loads(row[2])),
                    status=row[3], cost=float(row[4]), duration_ms=int(row[5]),
                    called_at=from_us(row[6]))


def spend_after(conn: Any, since: datetime, after_id: int) -> tuple[dict[str, Spend], int]:
    """The calls numbered after ``after_id`` since ``since``, per provider, and the
    highest number among them (both backends: the statement is the same)."""
    rows = conn.execute(
        "SELECT provider, count(*), coalesce(sum(cost), 0), max(id) FROM paid_calls "
        "WHERE id > ? AND called_at >= ? GROUP BY provider",
        (after_id, to_us(since))).fetchall()
    return ({r[0]: Spend(calls=int(r[1]), cost=float(r[2])) for r in rows},
            max([after_id, *(int(r[3]) for r in rows)]))


class PaidTroubles(Connected):
    """A provider's trouble (refused key, no balance, a pause), one row per provider,
    kept until a call succeeds again so that every process sees it."""

    def paid_troubles(self) -> dict[str, ProviderTrouble]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT provider, reason, since, until FROM paid_troubles").fetchall()
        return {r[0]: ProviderTrouble(r[0], r[1], from_us(r[2]), from_us(r[3])) for r in rows}

    def set_paid_trouble(self, trouble: ProviderTrouble) -> None:
        t = trouble
        with self._write() as conn:
            conn.execute(
                "INSERT INTO paid_troubles (provider, reason, since, until) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (provider) DO UPDATE SET reason = excluded.reason, "
                "since = excluded.since, until = excluded.until",
                (t.provider, t.reason, to_us(t.since), to_us(t.until)))

    def clear_paid_trouble(self, provider: str) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM paid_troubles WHERE provider = ?", (provider,))


class SpendMixin(PaidTroubles):
    """The ledger's records, the same statements on both backends."""


    def record_paid_call(self, call: PaidCall) -> None:
        with self._write() as conn:
            conn.execute(
                f"INSERT INTO paid_calls ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",  # noqa: S608
                (call.provider, call.purpose, json.dumps(list(call.source_ids)), call.status,
                 call.cost, call.duration_ms, to_us(call.called_at)))

    def spend_since(self, since: datetime) -> dict[str, Spend]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT provider, count(*), coalesce(sum(cost), 0) FROM paid_calls "
                "WHERE called_at >= ? GROUP BY provider", (to_us(since),)).fetchall()
        return {r[0]: Spend(calls=int(r[1]), cost=float(r[2])) for r in rows}

    def spend_after(self, since: datetime, after_id: int) -> tuple[dict[str, Spend], int]:
        with self._read() as conn:
            return spend_after(conn, since, after_id)

    def paid_calls(self, provider: str | None = None, since: datetime | None = None,
                   limit: int = 100) -> list[PaidCall]:
        where: list[str] = ["1 = 1"]
        params: list[Any] = []
        if provider is not None:
            where.append("provider = ?")
            params.append(provider)
        if since is not None:
            where.append("called_at >= ?")
            params.append(to_us(since))
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM paid_calls WHERE {' AND '.join(where)} "  # noqa: S608
                "ORDER BY called_at DESC, id DESC LIMIT ?", (*params, limit)).fetchall()
        return [_call(r) for r in rows]

