"""Paid calls: the columns, the row converter and the running spend both backends share,
and the providers' troubles (one row each)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.model import PaidCall, ProviderTrouble, Spend
from tidings.store.sql._base import from_us, to_us

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


def paid_troubles(conn: Any) -> dict[str, ProviderTrouble]:
    rows = conn.execute("SELECT provider, reason, since, until FROM paid_troubles").fetchall()
    return {r[0]: ProviderTrouble(r[0], r[1], from_us(r[2]), from_us(r[3])) for r in rows}


def set_paid_trouble(conn: Any, t: ProviderTrouble) -> None:
    """One row per provider (the same statement on both backends)."""
    conn.execute(
        "INSERT INTO paid_troubles (provider, reason, since, until) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (provider) DO UPDATE SET reason = excluded.reason, "
        "since = excluded.since, until = excluded.until",
        (t.provider, t.reason, to_us(t.since), to_us(t.until)))
