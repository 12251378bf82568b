"""Fetch runs: the columns and the row converter both backends read them with."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tidings.model import FetchRun, RunOutcome
from tidings.store.sql._base import from_us, opt_dt

RUN_COLUMNS = (
    "id, source_id, started_at, finished_at, outcome, found, created, revised, "
    "rediscovered, filtered, pages, backlog, reused, error, http_status, bytes, warnings"
)


def run_from_row(row: Sequence[Any]) -> FetchRun:
    return FetchRun(
        id=row[0], source_id=row[1], started_at=from_us(row[2]), finished_at=opt_dt(row[3]),
        outcome=RunOutcome(row[4]), found=row[5], created=row[6], revised=row[7],
        rediscovered=row[8], filtered=row[9], pages=row[10], backlog=row[11], reused=row[12],
        error=row[13], http_status=row[14], bytes=row[15], warnings=tuple(json.loads(row[16])),
    )
