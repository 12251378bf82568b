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
item with ``search_dirty = 1`` waits for ``index_pending``.
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Sequence

from tidings.store.sqlite._db import Access, chunks, marks
from tidings.store.textindex import TOKENIZER_VERSION, document

#: microseconds per FTS rowid unit
US = 1_000_000

_DELETE = ("INSERT INTO item_search (item_search, rowid, title, body, title_chars, "
           "body_chars) VALUES ('delete', ?, ?, ?, ?, ?)")


def unindex(conn: sqlite3.Connection, item_ids: Sequence[int]) -> None:
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


def _allocate(conn: sqlite3.Connection, wanted: list[int]) -> list[int]:
    """A unique FTS rowid for each wanted sort time, each as close above it as possible.

    Candidates are checked against the table a chunk at a time (one query per
    round, not one per item); a taken value moves up by one and is checked again.
    """
    out = list(wanted)
    used: set[int] = set()
    todo = list(range(len(out)))
    while todo:
        candidates = list({out[i] for i in todo})
        in_db: set[int] = set()
        for part in chunks(candidates):
            in_db.update(r[0] for r in conn.execute(
                f"SELECT search_rowid FROM items WHERE search_rowid IN ({marks(len(part))})",  # noqa: S608
                part))
        retry = []
        for i in todo:
            if out[i] in used or out[i] in in_db:
                out[i] += 1
                retry.append(i)
            else:
                used.add(out[i])
        todo = retry
    return out


class SearchIndexMixin(Access):

    def index_pending(self, limit: int = 5000) -> int:
        with self._write() as conn:
            rows = conn.execute(
                "SELECT id, sort_time, title, body, summary, search_rowid FROM items "
                "WHERE search_dirty = 1 ORDER BY id LIMIT ?", (limit,)).fetchall()
            if not rows:
                return 0
            stale = [r[0] for r in rows if r[5] is not None]
            if stale:
                unindex(conn, stale)
            rowids = _allocate(conn, [r[1] // US for r in rows])
            # ascending rowids: FTS5 flushes its in-memory postings whenever a rowid is
            # not above the previous one, so unsorted input would make a tiny segment
            # per step back in time, and merging those would be most of the indexing
            order = sorted(zip(rowids, rows, strict=True), key=operator.itemgetter(0))
            conn.executemany(
                "INSERT INTO item_search (rowid, title, body, title_chars, body_chars) "
                "VALUES (?, ?, ?, ?, ?)",
                [(rowid, *document(r[2], r[3], r[4])) for rowid, r in order])
            conn.executemany(
                "UPDATE items SET search_rowid = ?, search_dirty = 0 WHERE id = ?",
                [(rowid, r[0]) for rowid, r in order])
            return len(rows)

    def unindexed_count(self) -> int:
        with self._read() as conn:
            (n,) = conn.execute("SELECT count(*) FROM items WHERE search_dirty = 1").fetchone()
            return int(n)
