"""The sidebar's counts and "mark a source read" (``tidings.store.navigation``): the
statements of ``sqlite._navigation``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from tidings.store.navigation import SourceCounts
from tidings.store.postgres._db import Access
from tidings.store.sqlite._db import chunks, to_us
from tidings.store.sqlite._navigation import COUNTS, counts_from_rows, read_statement


class NavigationMixin(Access):

    def source_counts(self, since: datetime) -> list[SourceCounts]:
        with self._read() as conn:
            return counts_from_rows(conn.execute(COUNTS, (to_us(since),)).fetchall())

    def read_sources(self, source_ids: Sequence[str]) -> list[int]:
        changed: list[int] = []
        with self._write() as conn:
            for part in chunks(list(source_ids)):
                changed += (int(r[0]) for r in conn.execute(read_statement(part), part))
        return sorted(changed)
