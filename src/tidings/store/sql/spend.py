"""Paid calls: the columns, the row converter and the running spend both backends share."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.model import PaidCall, Spend
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
