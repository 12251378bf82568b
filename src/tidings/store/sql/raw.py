"""The raw archive (R-EXTRACT-5): every fetched body, compressed, for re-parsing.

One code for both backends: in cluster mode the bodies live in PostgreSQL so that
every worker reaches them (docs/scale.md); rows of either backend decode alike.
"""

from __future__ import annotations

import json
import threading
import zlib
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import zstandard

from tidings.errors import StorageError
from tidings.model import RawResponse
from tidings.store.sql._base import Connected, from_us, to_us

_BATCH = 200
# zstd at level 1: several times faster than zlib level 1 at about the same size
# (docs/storage.md), and every fetched body passes here inside the collection round.
# Rows stored with zlib keep that encoding and stay readable.
_COLUMNS = "id, url, final_url, status, headers, fetched_at, source_id, item_key, encoding, body"
#: zstd (de)compressor objects are not safe to share between threads, and bodies are
#: packed outside the write lock by whichever thread fetched them: one pair per thread
_local = threading.local()


def pack(body: bytes) -> bytes:
    """``body`` compressed with this thread's own zstd compressor."""
    if not hasattr(_local, "pack"):
        _local.pack = zstandard.ZstdCompressor(level=1)
    packed: bytes = _local.pack.compress(body)
    return packed


def _decode(encoding: str, blob: bytes) -> bytes:
    if encoding == "zstd":
        if not hasattr(_local, "unpack"):
            _local.unpack = zstandard.ZstdDecompressor()
        out: bytes = _local.unpack.decompress(blob)
        return out
    if encoding == "zlib":
        return zlib.decompress(blob)
    if encoding == "identity":
        return blob
    raise StorageError(f"raw response stored with unknown encoding {encoding!r}")


def _from_row(r: tuple[Any, ...]) -> RawResponse:
    return RawResponse(
        url=r[1], final_url=r[2], status=r[3], headers=json.loads(r[4]),
        fetched_at=from_us(r[5]), source_id=r[6], item_key=r[7],
        body=_decode(r[8], bytes(r[9])))  # PostgreSQL hands bytea out as a memoryview


class RawMixin(Connected):

    def put_raw(self, raw: RawResponse) -> int:
        body = bytes(raw.body)
        packed = pack(body)
        encoding, blob = ("zstd", packed) if len(packed) < len(body) else ("identity", body)
        with self._write() as conn:
            # fetchall: on SQLite a RETURNING statement left unfinished holds the transaction
            ((raw_id,),) = conn.execute(
                "INSERT INTO raw_responses (url, final_url, status, headers, fetched_at, "
                "source_id, item_key, encoding, size, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "RETURNING id",
                (raw.url, raw.final_url, raw.status, json.dumps(dict(raw.headers)),
                 to_us(raw.fetched_at), raw.source_id, raw.item_key, encoding, len(body),
                 blob)).fetchall()
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
        """Drop raw responses older than ``before``, except the newest one for each
        item key that a stored item still uses (the page its current body came from)."""
        with self._write() as conn:
            return int(conn.execute(
                "DELETE FROM raw_responses WHERE fetched_at < ? AND NOT ("
                " item_key IS NOT NULL"
                " AND EXISTS (SELECT 1 FROM items WHERE items.key = raw_responses.item_key)"
                " AND NOT EXISTS (SELECT 1 FROM raw_responses newer"
                "  WHERE newer.item_key = raw_responses.item_key"
                "  AND (newer.fetched_at, newer.id)"
                "  > (raw_responses.fetched_at, raw_responses.id)))",
                (to_us(before),)).rowcount)
