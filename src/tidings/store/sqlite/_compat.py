"""Client APIs (``tidings.store.compat``), SQLite's own part: the stream of entries,
its text quoted as JSON by SQLite (the rest: ``tidings.store.sql.compat``)."""

from __future__ import annotations

from tidings.store.base import ItemQuery
from tidings.store.compat import StreamEntry
from tidings.store.sql.compat import CompatMixin as SharedCompat
from tidings.store.sql.reading import timeline_statement
from tidings.store.sqlite._db import Access

# SQLite quotes the text as JSON itself (json_quote, in C) and hands it over as bytes:
# the body is never decoded into a Python string nor encoded again.
_ENTRY_COLUMNS = (
    "i.id, i.source_id, i.title, i.url, i.author, i.sort_time, i.discovered_at, "
    "i.updated_at, i.read, i.starred, "
    "CAST(json_quote(CASE WHEN i.body IS NULL OR i.body = '' THEN i.summary ELSE i.body END)"
    " AS BLOB), CASE WHEN i.body IS NULL OR i.body = '' THEN 0 ELSE 1 END"
)


class CompatMixin(SharedCompat, Access):

    def stream_entries(self, query: ItemQuery) -> list[StreamEntry]:
        with self._read() as conn:
            return list(map(StreamEntry._make, conn.execute(
                *timeline_statement(_ENTRY_COLUMNS, query, "items i")).fetchall()))
