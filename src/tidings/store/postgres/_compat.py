"""Client APIs (``tidings.store.compat``), PostgreSQL's own part: the stream of
entries, its text quoted as JSON by the server (the rest: ``tidings.store.sql.compat``)."""

from __future__ import annotations

from tidings.store.base import ItemQuery
from tidings.store.compat import StreamEntry
from tidings.store.postgres._db import Access
from tidings.store.sql.compat import CompatMixin as SharedCompat
from tidings.store.sql.reading import timeline_statement

#: SQLite's stream columns (sqlite/_compat.py), the text quoted as JSON by the server
#: (``to_json``; a missing text is JSON ``null`` as SQLite's ``json_quote`` gives)
_ENTRY_COLUMNS = (
    "i.id, i.source_id, i.title, i.url, i.author, i.sort_time, i.discovered_at, "
    "i.updated_at, i.read, i.starred, "
    "convert_to(coalesce(to_json(CASE WHEN i.body IS NULL OR i.body = '' THEN i.summary "
    "ELSE i.body END)::text, 'null'), 'UTF8'), "
    "CASE WHEN i.body IS NULL OR i.body = '' THEN 0 ELSE 1 END"
)


class CompatMixin(SharedCompat, Access):

    def stream_entries(self, query: ItemQuery) -> list[StreamEntry]:
        with self._read() as conn:
            rows = conn.execute(*timeline_statement(_ENTRY_COLUMNS, query, "items i")).fetchall()
        return [StreamEntry._make((*r[:10], bytes(r[10]), r[11])) for r in rows]
