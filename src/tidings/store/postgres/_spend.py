"""The spend ledger: every call to a paid API, so that a day's budget is known (R-SCHED-3)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from tidings.model import PaidCall, Spend
from tidings.store.postgres._db import Access
from tidings.store.sql._base import to_us
from tidings.store.sql.spend import _COLUMNS, _call, spend_after


class SpendMixin(Access):
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
        where: list[str] = ["true"]
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
