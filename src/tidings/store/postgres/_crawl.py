"""The blogroll crawler's tables (``tidings.store.crawl``) on PostgreSQL.

The statements of ``tidings.store.sqlite._crawl`` with its column lists and row
converters. SQLite runs one writer at a time; here two calls on one crawl may
run at once (two processes resuming it, a unit beside the writer), so what
SQLite gets from its write lock is asked for explicitly: the next site is taken
with ``FOR UPDATE SKIP LOCKED``, and the calls that count against a crawl's
limits (pages asked, sites queued) first lock the crawl's row, ``FOR NO KEY
UPDATE`` so that inserts referring to the crawl are not held up.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.errors import NotFoundError
from tidings.store.crawl import (
    Crawl,
    CrawlCounts,
    CrawlFinding,
    CrawlSite,
    PageAsk,
    SiteOutcome,
    SiteState,
)
from tidings.store.postgres._db import Access, Conn
from tidings.store.sqlite._crawl import (
    _ASK_PAGE,
    _COUNT_PAGE,
    _CRAWL_COLUMNS,
    _FINDINGS,
    _PAGE_STATE,
    _QUEUE_SITE,
    _QUEUED,
    _SITE_COLUMNS,
    _asked_before,
    _crawl,
    _site,
)
from tidings.store.sqlite._db import to_us

# breadth first as in SQLite: nothing deeper than the smallest depth still in play
_CLAIM_SITE = f"""
UPDATE crawl_sites SET state = 'visiting'
WHERE id = (
    SELECT id FROM crawl_sites
    WHERE crawl_id = ? AND state = 'queued'
      AND depth <= (SELECT min(depth) FROM crawl_sites
                    WHERE crawl_id = ? AND state IN ('queued', 'visiting'))
    ORDER BY depth, id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING {_SITE_COLUMNS}
"""  # noqa: S608 - the column list is a constant
_LOCK_CRAWL = "SELECT sites FROM crawls WHERE id = ? FOR NO KEY UPDATE"


class CrawlMixin(Access):

    def get_crawl(self, crawl_id: int) -> Crawl:
        with self._read() as conn:
            row = conn.execute(f"SELECT {_CRAWL_COLUMNS} FROM crawls WHERE id = ?",  # noqa: S608
                               (crawl_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"crawl {crawl_id} not found")
        return _crawl(row)

    def list_crawls(self, limit: int = 20) -> list[Crawl]:
        with self._read() as conn:
            rows = conn.execute(f"SELECT {_CRAWL_COLUMNS} FROM crawls "  # noqa: S608
                                "ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [_crawl(r) for r in rows]

    def crawl_counts(self, crawl_id: int) -> CrawlCounts:
        with self._read() as conn:
            states = dict(conn.execute(
                "SELECT state, count(*) FROM crawl_sites WHERE crawl_id = ? GROUP BY state",
                (crawl_id,)).fetchall())
            (feeds,) = conn.row("SELECT count(*) FROM crawl_feeds WHERE crawl_id = ?",
                                (crawl_id,))
            row = conn.execute("SELECT pages FROM crawls WHERE id = ?", (crawl_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"crawl {crawl_id} not found")
        return CrawlCounts(queued=states.get("queued", 0), visiting=states.get("visiting", 0),
                           done=states.get("done", 0), failed=states.get("failed", 0),
                           skipped=states.get("skipped", 0), feeds=feeds, pages=row[0])

    def crawl_findings(self, crawl_id: int) -> list[CrawlFinding]:
        with self._read() as conn:
            rows = conn.execute(_FINDINGS, (crawl_id,)).fetchall()
        return [CrawlFinding(*row) for row in rows]

    def crawl_queued(self, crawl_id: int) -> dict[int, int]:
        with self._read() as conn:
            rows = conn.execute(_QUEUED, (crawl_id,)).fetchall()
        return dict(rows)

    def crawl_unanswered(self, crawl_id: int) -> list[str]:
        # byte order, as SQLite sorts text
        with self._read() as conn:
            rows = conn.execute("SELECT url FROM crawl_pages WHERE crawl_id = ? AND "
                                "state = 'asked' ORDER BY url COLLATE \"C\"",
                                (crawl_id,)).fetchall()
        return [r[0] for r in rows]

    def crawl_sites(self, crawl_id: int, states: Sequence[SiteState] = (),
                    limit: int = 1000) -> list[CrawlSite]:
        where, args = "crawl_id = ?", [crawl_id]
        if states:
            where += " AND state = ANY(?)"
            args.append([s.value for s in states])  # type: ignore[arg-type]
        with self._read() as conn:
            rows = conn.execute(f"SELECT {_SITE_COLUMNS} FROM crawl_sites "  # noqa: S608
                                f"WHERE {where} ORDER BY depth, id LIMIT ?",
                                (*args, limit)).fetchall()
        return [_site(r) for r in rows]

    # ----------------------------------------------------------------- writes
    def create_crawl(self, seeds: Sequence[tuple[str, str]], max_depth: int, max_sites: int,
                     max_pages: int, now: datetime) -> int:
        with self._write() as conn:
            (crawl_id,) = conn.row(
                "INSERT INTO crawls (seeds, max_depth, max_sites, max_pages, state, created_at) "
                "VALUES (?, ?, ?, ?, 'running', ?) RETURNING id",
                (json.dumps([url for _, url in seeds]), max_depth, max_sites, max_pages,
                 to_us(now)))
            conn.executemany(
                "INSERT INTO crawl_sites (crawl_id, site, url, depth, state) "
                "VALUES (?, ?, ?, 0, 'queued') ON CONFLICT DO NOTHING",
                [(crawl_id, site, url) for site, url in seeds[:max(max_sites, 1)]])
            conn.execute("UPDATE crawls SET sites = (SELECT count(*) FROM crawl_sites "
                         "WHERE crawl_id = ?) WHERE id = ?", (crawl_id, crawl_id))
            return int(crawl_id)

    def claim_crawl_site(self, crawl_id: int) -> CrawlSite | None:
        with self._write() as conn:
            row = conn.execute(_CLAIM_SITE, (crawl_id, crawl_id)).fetchone()
        return None if row is None else _site(row)

    def requeue_crawl_visits(self, crawl_id: int) -> int:
        with self._write() as conn:
            cur = conn.execute("UPDATE crawl_sites SET state = 'queued' "
                               "WHERE crawl_id = ? AND state = 'visiting'", (crawl_id,))
            conn.execute("UPDATE crawls SET state = 'running', finished_at = NULL WHERE id = ?",
                         (crawl_id,))
            return cur.rowcount

    def ask_crawl_page(self, crawl_id: int, site_id: int, url: str
                       ) -> tuple[PageAsk, dict[str, Any] | None]:
        """The crawl's row is locked first: two askers of one address (or of the last
        page within the limit) take turns, as under SQLite's write lock."""
        with self._write() as conn:
            conn.execute(_LOCK_CRAWL, (crawl_id,))
            if conn.execute(_ASK_PAGE, (crawl_id, url, site_id, crawl_id)).rowcount:
                conn.execute(_COUNT_PAGE, (crawl_id,))
                return PageAsk.NEW, None
            row = conn.execute(_PAGE_STATE, (crawl_id, url)).fetchone()
        return _asked_before(row)

    def finish_crawl_page(self, crawl_id: int, url: str, data: dict[str, Any]) -> None:
        with self._write() as conn:
            conn.execute("UPDATE crawl_pages SET state = 'done', data = ? "
                         "WHERE crawl_id = ? AND url = ?",
                         (json.dumps(data, ensure_ascii=False), crawl_id, url))

    def finish_crawl_site(self, site_id: int, outcome: SiteOutcome) -> int:
        with self._write() as conn:
            row = conn.execute(
                "SELECT s.crawl_id, s.site, s.depth, c.max_depth, c.max_sites FROM crawl_sites s "
                "JOIN crawls c ON c.id = s.crawl_id WHERE s.id = ?", (site_id,)).fetchone()
            if row is None:
                raise NotFoundError(f"crawl site {site_id} not found")
            crawl_id, site, depth, max_depth, max_sites = row
            conn.execute("UPDATE crawl_sites SET state = ?, reason = ?, title = ?, abstract = ? "
                         "WHERE id = ?", (outcome.state.value, outcome.reason[:500],
                                          outcome.title[:300], outcome.abstract[:300], site_id))
            feed = outcome.feed
            if feed is not None:
                conn.execute("INSERT INTO crawl_feeds (crawl_id, site_id, url, type, title, "
                             "score) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                             (crawl_id, site_id, feed.url, feed.type, feed.title[:300],
                              feed.score))
            if depth >= max_depth or not outcome.found:
                return 0
            return _queue_found(conn, crawl_id, site, depth + 1, max_sites, outcome)

    def finish_crawl(self, crawl_id: int, now: datetime) -> None:
        with self._write() as conn:
            conn.execute("UPDATE crawls SET state = 'done', finished_at = ? WHERE id = ?",
                         (to_us(now), crawl_id))

    def mark_crawl_sources(self, finding_ids: Sequence[int], source_ids: Sequence[str]) -> None:
        with self._write() as conn:
            conn.executemany("UPDATE crawl_feeds SET source_id = ? WHERE id = ?",
                             list(zip(source_ids, finding_ids, strict=True)))


def _queue_found(conn: Conn, crawl_id: int, site: str, depth: int, max_sites: int,
                 outcome: SiteOutcome) -> int:
    """Queue the sites a visit found, in their order, until the crawl holds
    ``max_sites``; a site already known is passed over (the insert that conflicts)."""
    (known,) = conn.row(_LOCK_CRAWL, (crawl_id,))
    queued = 0
    for found in outcome.found:
        if known >= max_sites:
            break
        cur = conn.execute(_QUEUE_SITE, (crawl_id, found.site, found.url, depth, site,
                                         found.link_text[:200]))
        known += cur.rowcount
        queued += cur.rowcount
    if queued:
        conn.execute("UPDATE crawls SET sites = sites + ? WHERE id = ?", (queued, crawl_id))
    return queued
