"""The search index: contentless FTS5 over pre-tokenized text (see textindex).

The FTS rowid of an item is not its id but its sort time in whole seconds
(nudged up by one until unique), kept in ``items.search_rowid``. FTS5 walks a
doclist in rowid order and stops at LIMIT, so "newest first" costs a few pages
even for a term in half the archive, and date ranges become rowid ranges.
Seconds rather than microseconds because doclists store rowid deltas as
varints: second-sized gaps keep the index about a third smaller.

A contentless table stores no text, so removing an entry needs the tokens that
were indexed: ``unindex`` re-derives them from the item row, which is why any
change to an item's title or body must call it *before* the row changes. An
item with ``search_dirty = 1`` waits for the index job (``store/searchindex.py``).
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Sequence

from tidings.store.searchindex import IndexDoc, IndexInput
from tidings.store.sql._base import SqlConn, chunks, marks
from tidings.store.sqlite._db import Access
from tidings.store.textindex import TOKENIZER_VERSION, document

#: microseconds per FTS rowid unit
US = 1_000_000

_DELETE = ("INSERT INTO item_search (item_search, rowid, title, body, title_chars, "
           "body_chars) VALUES ('delete', ?, ?, ?, ?, ?)")


def unindex(conn: SqlConn, item_ids: Sequence[int]) -> None:
    """Take these items out of the index and mark them for re-indexing."""
    for part in chunks(list(item_ids)):
        rows = conn.execute(
            "SELECT id, search_rowid, title, body, summary FROM items "  # noqa: S608
            f"WHERE id IN ({marks(len(part))}) AND search_rowid IS NOT NULL", part).fetchall()
        if not rows:
            continue
        rows.sort(key=operator.itemgetter(1))  # ascending rowids, as in index_pending
        conn.executemany(_DELETE, [(r[1], *document(r[2], r[3], r[4])) for r in rows])
        conn.executemany("UPDATE items SET search_rowid = NULL, search_dirty = 1 WHERE id = ?",
                         [(r[0],) for r in rows])


def check_tokenizer(conn: sqlite3.Connection) -> None:
    """Rebuild the index from scratch when it was built by another tokenizer version."""
    row = conn.execute("SELECT value FROM meta WHERE name = 'search_tokenizer'").fetchone()
    if row is not None and row[0] == TOKENIZER_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("INSERT INTO item_search (item_search) VALUES ('delete-all')")
        conn.execute("UPDATE items SET search_rowid = NULL, search_dirty = 1 "
                     "WHERE search_rowid IS NOT NULL OR search_dirty = 0")
        conn.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('search_tokenizer', ?)",
                     (TOKENIZER_VERSION,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


_BLOCK = 4096  # rowids read from the table per query while looking for free ones


def _allocate(conn: sqlite3.Connection, wanted: list[int]) -> list[int]:
    """A unique FTS rowid for each wanted sort time, the first free one at or above it.

    Many items can share one second (an import, a feed that dates every entry alike):
    a taken value points on to the next free one it led to, so N items of one second
    cost about N steps, not N * N; the table's taken values are read a block of
    rowids per query, only for the blocks the walk reaches.
    """
    taken: set[int] = set()
    read: set[int] = set()
    onward: dict[int, int] = {}  # taken value -> where the walk from it last ended

    def is_taken(value: int) -> bool:
        block = value // _BLOCK
        if block not in read:
            read.add(block)
            taken.update(r[0] for r in conn.execute(
                "SELECT search_rowid FROM items WHERE search_rowid BETWEEN ? AND ?",
                (block * _BLOCK, block * _BLOCK + _BLOCK - 1)))
        return value in taken

    out = []
    for want in wanted:
        value, passed = want, []
        while is_taken(value):
            passed.append(value)
            value = onward.get(value, value + 1)
        for step in passed:
            onward[step] = value
        taken.add(value)
        out.append(value)
    return out


class SearchIndexMixin(Access):

    def index_inputs(self, limit: int) -> list[IndexInput]:
        with self._read() as conn:
            return [IndexInput(*r) for r in conn.execute(
                "SELECT id, sort_time, title, body, summary FROM items "
                "WHERE search_dirty = 1 ORDER BY id LIMIT ?", (limit,)).fetchall()]

    def build_index(self, inputs: Sequence[IndexInput]) -> list[IndexDoc]:
        return [IndexDoc(x, document(x.title, x.body, x.summary)) for x in inputs]

    def write_index(self, docs: Sequence[IndexDoc]) -> int:
        with self._write() as conn:
            current: dict[int, tuple[object, ...]] = {}
            for part in chunks([d.source.item_id for d in docs]):
                # by id alone: the rowid look-up, whatever the statistics say
                current.update((r[0], tuple(r[1:6])) for r in conn.execute(
                    "SELECT id, sort_time, title, body, summary, search_rowid, "  # noqa: S608
                    f"search_dirty FROM items WHERE id IN ({marks(len(part))})", part)
                    if r[6] == 1)
            fresh = [d for d in docs if current.get(d.source.item_id, ())[:4] == d.source.text()]
            if not fresh:
                return 0
            stale = [d.source.item_id for d in fresh if current[d.source.item_id][4] is not None]
            if stale:
                unindex(conn, stale)
            rowids = _allocate(conn, [d.source.sort_time // US for d in fresh])
            # ascending rowids: FTS5 flushes its in-memory postings whenever a rowid is
            # not above the previous one, so unsorted input would make a tiny segment
            # per step back in time, and merging those would be most of the indexing
            order = sorted(zip(rowids, fresh, strict=True), key=operator.itemgetter(0))
            conn.executemany(
                "INSERT INTO item_search (rowid, title, body, title_chars, body_chars) "
                "VALUES (?, ?, ?, ?, ?)", [(rowid, *d.columns) for rowid, d in order])
            conn.executemany(
                "UPDATE items SET search_rowid = ?, search_dirty = 0 WHERE id = ?",
                [(rowid, d.source.item_id) for rowid, d in order])
            return len(order)

    def index_pending(self, limit: int = 5000) -> int:
        return self.write_index(self.build_index(self.index_inputs(limit)))

    def unindexed_count(self) -> int:
        with self._read() as conn:
            (n,) = conn.execute("SELECT count(*) FROM items WHERE search_dirty = 1").fetchone()
            return int(n)
