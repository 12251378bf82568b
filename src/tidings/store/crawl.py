"""What the blogroll crawler keeps in storage (R-DISC-3): crawls, their frontier, pages, finds.

Part of the :class:`tidings.store.base.Storage` protocol, in its own module
like ``ops``. A crawl is a breadth-first walk over sites; everything it knows
lives here so that a crawl killed at any moment resumes where it stopped:

* the **frontier**: one row per site (``queued`` → ``visiting`` → ``done`` /
  ``failed`` / ``skipped``), with its depth, the site it was found from and,
  for every row that did not end well, a one-line reason;
* the **pages**: one row per address the crawl asked for, written *before*
  the request is sent (``asked``) and completed with what the crawler made of
  the answer (``done``, a small JSON document), so a resumed crawl reuses the
  answer instead of asking again. Counting them enforces the page limit;
* the **finds**: the feed of each site, with the site's title and abstract.

Semantics as in ``base``: aware UTC datetimes, atomic calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any, Protocol


class SiteState(Enum):
    QUEUED = "queued"
    VISITING = "visiting"
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"


class PageAsk(Enum):
    """The answer to "may I fetch this address?"."""

    NEW = "new"  # recorded as asked: fetch it
    DONE = "done"  # answered before: here is what was made of it
    ASKED = "asked"  # asked before but never answered (the crawl was killed meanwhile)
    LIMIT = "limit"  # the crawl's page limit is reached: do not fetch


@dataclass(frozen=True, slots=True)
class Crawl:
    id: int
    seeds: tuple[str, ...]
    max_depth: int
    max_sites: int
    max_pages: int
    state: str  # running / done
    pages: int  # addresses asked for so far
    created_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class CrawlSite:
    """One row of the frontier."""

    id: int
    crawl_id: int
    site: str  # the site key (``tidings.discovery.sites.site_key``)
    url: str  # where the visit starts
    depth: int
    found_from: str  # the site key whose blogroll named it ('' for seeds)
    link_text: str  # what that blogroll called it
    state: SiteState
    reason: str = ""
    title: str = ""
    abstract: str = ""


@dataclass(frozen=True, slots=True)
class CrawlFeed:
    """The feed a site offers, as found by the crawler."""

    url: str
    type: str
    title: str
    score: int


@dataclass(frozen=True, slots=True)
class CrawlFinding:
    """A find with its site, for listings and OPML."""

    id: int
    crawl_id: int
    feed_url: str
    feed_type: str
    feed_title: str
    site_url: str
    site_title: str
    abstract: str
    depth: int
    found_from: str
    source_id: str | None  # the source it became, once added


@dataclass(frozen=True, slots=True)
class CrawlCounts:
    queued: int
    visiting: int
    done: int
    failed: int
    skipped: int
    feeds: int
    pages: int


@dataclass(frozen=True, slots=True)
class NextSite:
    """A site a blogroll named, for the frontier."""

    site: str
    url: str
    link_text: str


@dataclass(frozen=True, slots=True)
class SiteOutcome:
    """How a visit ended: written in one step with the feed and the sites it found."""

    state: SiteState
    reason: str = ""
    title: str = ""
    abstract: str = ""
    feed: CrawlFeed | None = None
    found: Sequence[NextSite] = ()


class CrawlReads(Protocol):
    def get_crawl(self, crawl_id: int) -> Crawl:
        """NotFoundError when there is no such crawl."""
        ...

    def list_crawls(self, limit: int = 20) -> list[Crawl]:
        """Newest first."""
        ...

    def crawl_counts(self, crawl_id: int) -> CrawlCounts: ...

    def crawl_findings(self, crawl_id: int) -> list[CrawlFinding]:
        """Every find of the crawl, by depth then in the order found."""
        ...

    def crawl_queued(self, crawl_id: int) -> dict[int, int]:
        """How many sites are queued at each depth (depths with none left out)."""
        ...

    def crawl_unanswered(self, crawl_id: int) -> list[str]:
        """Addresses asked for and never answered: in flight when the crawl was stopped
        (a resumed crawl asks for them again, once)."""
        ...

    def crawl_sites(self, crawl_id: int, states: Sequence[SiteState] = (),
                    limit: int = 1000) -> list[CrawlSite]:
        """Frontier rows (in ``states`` if given), by depth then in the order found."""
        ...


class CrawlWrites(Protocol):
    def create_crawl(self, seeds: Sequence[tuple[str, str]], max_depth: int, max_sites: int,
                     max_pages: int, now: datetime) -> int:
        """A new crawl with its seeds ``(site key, url)`` queued at depth 0; its id."""
        ...

    def claim_crawl_site(self, crawl_id: int) -> CrawlSite | None:
        """The next site to visit, marked ``visiting``; None when none may start now.

        Breadth first, level by level: a site of depth ``d`` is handed out only
        when no site of a smaller depth is queued or being visited, so every
        site is visited at its shortest distance from the seeds.
        """
        ...

    def requeue_crawl_visits(self, crawl_id: int) -> int:
        """Put the sites a killed run was visiting back in the queue; how many."""
        ...

    def ask_crawl_page(self, crawl_id: int, site_id: int, url: str
                       ) -> tuple[PageAsk, dict[str, Any] | None]:
        """Record that ``url`` is about to be fetched, unless it was asked before or the
        page limit is reached. ``DONE`` comes with what was stored for it."""
        ...

    def finish_crawl_page(self, crawl_id: int, url: str, data: dict[str, Any]) -> None:
        """Store what the crawler made of the answer to ``url`` (JSON-able)."""
        ...

    def finish_crawl_site(self, site_id: int, outcome: SiteOutcome) -> int:
        """End a visit: its state, reason, title, abstract and feed, and the sites it
        found queued one level deeper (within the crawl's depth and site limits; a
        site already known keeps its row). Returns how many sites were queued."""
        ...

    def finish_crawl(self, crawl_id: int, now: datetime) -> None: ...

    def mark_crawl_sources(self, finding_ids: Sequence[int], source_ids: Sequence[str]) -> None:
        """Remember which source each find became (pairwise)."""
        ...
