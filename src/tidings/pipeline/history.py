"""Importing history (R-DEDUP-5): items from an export, stored as imported baseline.

The input is JSON lines, one item per line, as ``tidings export`` writes them
(``source``, ``key``, ``url``, ``title``, ``summary``, ``body``, ``published_at``,
``author``, ``categories``…); another reader's export fits when its lines carry at
least a ``url`` (or ``key``) and name their source, or when ``--source`` names one
for every line. Imported items go through ``upsert_items`` with ``imported``: they
get no comparable hash, so the first real collection of the same item only records
its baseline and is not counted as a revision; and they are history (backfill), so
an import never floods Today. A bad line is reported with its number and skipped;
every good line is stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tidings.dates import utc_instant
from tidings.model import BodyState, ItemData

#: lines stored per write step (one transaction each)
BATCH = 500


@dataclass(slots=True)
class HistoryReport:
    created: int = 0
    present: int = 0  # already in the archive (or tombstoned, R-DEDUP-11)
    notes: list[str] = field(default_factory=list)  # "line 7: …", one per refused line


def _text(row: Mapping[str, Any], name: str) -> str:
    value = row.get(name)
    return value.strip() if isinstance(value, str) else ""


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return utc_instant(datetime.fromisoformat(value))  # the rule of tidings.dates
    except ValueError:
        return None


def history_item(row: Mapping[str, Any]) -> ItemData:
    """One exported item as the pipeline takes it (declared history)."""
    body = row.get("body") if isinstance(row.get("body"), str) else None
    try:
        state = BodyState(row.get("body_state") or "")
    except ValueError:
        state = BodyState.OK if body else BodyState.PENDING
    categories = row.get("categories")
    return ItemData(
        title=_text(row, "title"), url=_text(row, "url") or None,
        key=_text(row, "key") or None, summary=_text(row, "summary"), body=body,
        body_state=state, published_at=_when(row.get("published_at")),
        updated_at=_when(row.get("updated_at")), author=_text(row, "author"),
        categories=tuple(c for c in categories if isinstance(c, str))[:50]
        if isinstance(categories, list) else (),
        raw={"imported": True}, backfill=True)


def read_history(lines: Iterable[tuple[int, str]], source_id: str | None, known: set[str],
                 report: HistoryReport) -> dict[str, list[ItemData]]:
    """Numbered lines' items by source (``source_id`` for all, else each line's own);
    each refused line becomes a note in ``report``."""
    out: dict[str, list[ItemData]] = {}
    for number, line in lines:
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            report.notes.append(f"line {number}: not JSON ({exc.msg})")
            continue
        if not isinstance(row, dict):
            report.notes.append(f"line {number}: not a JSON object")
            continue
        sid = source_id or _text(row, "source")
        if sid not in known:
            report.notes.append(f"line {number}: no source {sid!r} in this archive "
                                "(add it first, or name one with --source)")
            continue
        if not _text(row, "url") and not _text(row, "key"):
            report.notes.append(f"line {number}: neither url nor key")
            continue
        out.setdefault(sid, []).append(history_item(row))
    return out
