"""The raw archive (R-EXTRACT-5) in PostgreSQL, so that every worker reaches it.

Compressed as in SQLite (zstd, rows of either backend decode alike); see
docs/scale.md for why the bodies live in the database in cluster mode.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from tidings.model import RawResponse
from tidings.store.postgres._db import Access
from tidings.store.sql._base import from_us, to_us
from tidings.store.sqlite._raw import _BATCH, _COLUMNS, _decode, pack


def _from_row(r: tuple[Any, ...]) -> RawResponse:
    return RawResponse(
        url=r[1], final_url=r[2], status=r[3], headers=json.loads(r[4]),
        fetched_at=from_us(r[5]), source_id=r[6], item_key=r[7],
        body=_decode(r[8], bytes(r[9])))


class RawMixin(Access):

    def put_raw(self, raw: RawResponse) -> int:
        body = bytes(raw.body)
        packed = pack(body)
        encoding, blob = ("zstd", packed) if len(packed) < len(body) else ("identity", body)
        with self._write() as conn:
            (raw_id,) = conn.row(
                "INSERT INTO raw_responses (url, final_url, status, headers, fetched_at, "
                "source_id, item_key, encoding, size, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "RETURNING id",
                (raw.url, raw.final_url, raw.status, json.dumps(dict(raw.headers)),
                 to_us(raw.fetched_at), raw.source_id, raw.item_key, encoding, len(body),
                 blob))
            return int(raw_id)

    def iter_raw(
        self, source_id: str | None = None, since: datetime | None = None,
        item_key: str | None = None,
    ) -> Iterator[RawResponse]:
        """Oldest first, read in small batches so no read transaction stays open long."""
        where = ["(fetched_at, id) > (?, ?)"]
        params: list[Any] = []
        for clause, value in (("source_id = ?", source_id), ("item_key = ?", item_key),
                              ("fetched_at >= ?", since and to_us(since))):
            if value is not None:
                where.append(clause)
                params.append(value)
        sql = (f"SELECT {_COLUMNS} FROM raw_responses WHERE {' AND '.join(where)} "  # noqa: S608
               "ORDER BY fetched_at, id LIMIT ?")
        after: tuple[int, int] = (-(2**63), 0)
        while True:
            with self._read() as conn:
                rows = conn.execute(sql, (*after, *params, _BATCH)).fetchall()
            for r in rows:
                yield _from_row(r)
            if len(rows) < _BATCH:
                return
            after = (rows[-1][5], rows[-1][0])

    def prune_raw(self, before: datetime) -> int:
        with self._write() as conn:
            return int(conn.execute(
                "DELETE FROM raw_responses r WHERE fetched_at < ? AND NOT ("
                " item_key IS NOT NULL"
                " AND EXISTS (SELECT 1 FROM items WHERE items.key = r.item_key)"
                " AND NOT EXISTS (SELECT 1 FROM raw_responses newer"
                "  WHERE newer.item_key = r.item_key"
                "  AND (newer.fetched_at, newer.id) > (r.fetched_at, r.id)))",
                (to_us(before),)).rowcount)
