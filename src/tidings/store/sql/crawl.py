"""The blogroll crawler's tables (``tidings.store.crawl``), written once.

SQLite runs one writer at a time; PostgreSQL may run two calls on one crawl at once
(two processes resuming it, a unit beside the writer), so what SQLite gets from its
write lock is asked for in the dialect's words: the next site is taken with
``FOR UPDATE SKIP LOCKED``, and the calls that count against a crawl's limits
(pages asked, sites queued) first lock the crawl's row ``FOR NO KEY UPDATE``, so
that inserts referring to the crawl are not held up. On SQLite both clauses are
empty and the same statements run under its write lock.
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
from tidings.store.sql._base import Connected, SqlConn, from_us, opt_dt, to_us

_CRAWL_COLUMNS = ("id, seeds, max_depth, max_sites, max_pages, state, pages, created_at, "
                  "finished_at")
_SITE_COLUMNS = ("id, crawl_id, site, url, depth, found_from, link_text, state, reason, title, "
                 "abstract")
# breadth first: nothing deeper than the smallest depth still in play starts
_CLAIM_SITE = f"""
UPDATE crawl_sites SET state = 'visiting'
WHERE id = (
    SELECT id FROM crawl_sites
    WHERE crawl_id = ? AND state = 'queued'
      AND depth <= (SELECT min(depth) FROM crawl_sites
                    WHERE crawl_id = ? AND state IN ('queued', 'visiting'))
    ORDER BY depth, id LIMIT 1{{skip_locked}})
RETURNING {_SITE_COLUMNS}
"""  # noqa: S608 - the column list is a constant
_LOCK_CRAWL = "SELECT sites FROM crawls WHERE id = ?{lock}"
_QUEUE_SITE = """
INSERT INTO crawl_sites (crawl_id, site, url, depth, found_from, link_text, state)
VALUES (?, ?, ?, ?, ?, ?, 'queued') ON CONFLICT (crawl_id, site) DO NOTHING
"""
_QUEUED = ("SELECT depth, count(*) FROM crawl_sites WHERE crawl_id = ? AND state = 'queued' "
           "GROUP BY depth")
_FINDINGS = """
SELECT f.id, f.crawl_id, f.url, f.type, f.title, s.url, s.title, s.abstract, s.depth,
       s.found_from, f.source_id
FROM crawl_feeds f JOIN crawl_sites s ON s.id = f.site_id
WHERE f.crawl_id = ? ORDER BY s.depth, s.id
"""
# a page is recorded as asked when it is new and the crawl's page limit allows it; else
# the page's row (asked or answered before) or none (the limit) says why not
_ASK_PAGE = """
INSERT INTO crawl_pages (crawl_id, url, site_id, state)
SELECT ?, ?, ?, 'asked' FROM crawls WHERE id = ? AND pages < max_pages
ON CONFLICT (crawl_id, url) DO NOTHING
"""
_UNANSWERED = ("SELECT url FROM crawl_pages WHERE crawl_id = ? AND state = 'asked' "
               "ORDER BY url{order}")
_COUNT_PAGE = "UPDATE crawls SET pages = pages + 1 WHERE id = ?"
_PAGE_STATE = "SELECT state, data FROM crawl_pages WHERE crawl_id = ? AND url = ?"


def _asked_before(row: Sequence[Any] | None) -> tuple[PageAsk, dict[str, Any] | None]:
    """What ``ask_crawl_page`` answers when it recorded nothing: the page's row, if any."""
    if row is None:
        return PageAsk.LIMIT, None
    if row[0] == "done":
        return PageAsk.DONE, json.loads(row[1])
    return PageAsk.ASKED, None


def _crawl(row: Sequence[Any]) -> Crawl:
    return Crawl(id=row[0], seeds=tuple(json.loads(row[1])), max_depth=row[2],
                 max_sites=row[3], max_pages=row[4], state=row[5], pages=row[6],
                 created_at=from_us(row[7]), finished_at=opt_dt(row[8]))


def _site(row: Sequence[Any]) -> CrawlSite:
    return CrawlSite(id=row[0], crawl_id=row[1], site=row[2], url=row[3], depth=row[4],
                     found_from=row[5], link_text=row[6], state=SiteState(row[7]),
                     reason=row[8], title=row[9], abstract=row[10])


class CrawlMixin(Connected):

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
            (feeds,) = conn.execute("SELECT count(*) FROM crawl_feeds WHERE crawl_id = ?",
                                    (crawl_id,)).fetchone()
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
        with self._read() as conn:
            rows = conn.execute(_UNANSWERED.format(order=self.dialect.byte_order),
                                (crawl_id,)).fetchall()
        return [r[0] for r in rows]

    def crawl_sites(self, crawl_id: int, states: Sequence[SiteState] = (),
                    limit: int = 1000) -> list[CrawlSite]:
        where, args = "crawl_id = ?", [crawl_id]
        if states:
            clause, values = self.dialect.any_of("state", [s.value for s in states])
            where += f" AND {clause}"
            args.extend(values)
        with self._read() as conn:
            rows = conn.execute(f"SELECT {_SITE_COLUMNS} FROM crawl_sites "  # noqa: S608
                                f"WHERE {where} ORDER BY depth, id LIMIT ?",
                                (*args, limit)).fetchall()
        return [_site(r) for r in rows]

    # ----------------------------------------------------------------- writes
    def create_crawl(self, seeds: Sequence[tuple[str, str]], max_depth: int, max_sites: int,
                     max_pages: int, now: datetime) -> int:
        with self._write() as conn:
            # fetchall: on SQLite a RETURNING statement left unfinished holds the transaction
            ((crawl_id,),) = conn.execute(
                "INSERT INTO crawls (seeds, max_depth, max_sites, max_pages, state, created_at) "
                "VALUES (?, ?, ?, ?, 'running', ?) RETURNING id",
                (json.dumps([url for _, url in seeds]), max_depth, max_sites, max_pages,
                 to_us(now))).fetchall()
            conn.executemany(
                "INSERT INTO crawl_sites (crawl_id, site, url, depth, state) "
                "VALUES (?, ?, ?, 0, 'queued') ON CONFLICT DO NOTHING",
                [(crawl_id, site, url) for site, url in seeds[:max(max_sites, 1)]])
            conn.execute("UPDATE crawls SET sites = (SELECT count(*) FROM crawl_sites "
                         "WHERE crawl_id = ?) WHERE id = ?", (crawl_id, crawl_id))
            return int(crawl_id)

    def claim_crawl_site(self, crawl_id: int) -> CrawlSite | None:
        claim = _CLAIM_SITE.format(skip_locked=self.dialect.skip_locked)
        with self._write() as conn:
            rows = conn.execute(claim, (crawl_id, crawl_id)).fetchall()
        return _site(rows[0]) if rows else None

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
            conn.execute(_LOCK_CRAWL.format(lock=self.dialect.lock_row), (crawl_id,))
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
            return self._queue_found(conn, crawl_id, site, depth + 1, max_sites, outcome)

    def _queue_found(self, conn: SqlConn, crawl_id: int, site: str, depth: int,
                     max_sites: int, outcome: SiteOutcome) -> int:
        """Queue the sites a visit found, in their order, until the crawl holds
        ``max_sites``; a site already known is passed over (the insert that conflicts)."""
        (known,) = conn.execute(_LOCK_CRAWL.format(lock=self.dialect.lock_row),
                                (crawl_id,)).fetchone()
        queued = 0
        for found in outcome.found:
            if known >= max_sites:
                break
            added = conn.execute(_QUEUE_SITE, (crawl_id, found.site, found.url, depth, site,
                                               found.link_text[:200])).rowcount
            known += added
            queued += added
        if queued:
            conn.execute("UPDATE crawls SET sites = sites + ? WHERE id = ?", (queued, crawl_id))
        return queued

    def finish_crawl(self, crawl_id: int, now: datetime) -> None:
        with self._write() as conn:
            conn.execute("UPDATE crawls SET state = 'done', finished_at = ? WHERE id = ?",
                         (to_us(now), crawl_id))

    def mark_crawl_sources(self, finding_ids: Sequence[int], source_ids: Sequence[str]) -> None:
        with self._write() as conn:
            conn.executemany("UPDATE crawl_feeds SET source_id = ? WHERE id = ?",
                             list(zip(source_ids, finding_ids, strict=True)))
