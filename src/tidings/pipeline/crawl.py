"""The blogroll crawler (R-DISC-3): breadth-first over sites, resumable, polite.

A crawl starts from seed sites. Visiting a site means: its robots.txt, its
page (feeds, title, abstract, blogroll), when the page declares no feed a few
guessed feed addresses, and when it has no blogroll the page it calls
"Links" or "友情链接". The sites its blogroll names are queued one level
deeper, within the depth and site limits.

Everything lives in storage (``tidings.store.crawl``), written through the
writer: a page is recorded as *asked* before its request is sent and its
answer, as the crawler read it, is stored in the site's next write step (the
next page's ask, or the visit's end): before any request or row that depends
on it. A resumed crawl therefore reuses every stored answer and never asks
for those pages again; only a page that was in flight at the moment of a
kill (asked, not stored as answered) is asked again. Nothing else is held in
memory but the pages in flight (with their answers until stored) and a
bounded cache of parsed robots files, so memory stays flat whatever the
crawl's size.

Politeness is the Fetcher's (per-host concurrency and spacing,
R-HTTP-8); robots.txt is honoured for every page (see
``tidings.discovery.robots``). Every bad answer ends as a one-line reason on
the site's frontier row; the crawl goes on.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol
from urllib.parse import urlsplit

from tidings.discovery.autodiscover import PROBE_PATHS, PROBE_SCORE
from tidings.discovery.crawlpage import PageRules, read_home, read_probe, read_roll_page
from tidings.discovery.robots import RobotsCache, crawler_user_agent, fetch_robots, robots_url
from tidings.discovery.sites import site_key
from tidings.errors import BadValueError, ConfigError
from tidings.pipeline.env import PipelineEnv
from tidings.store.crawl import (
    CrawlCounts,
    CrawlFeed,
    CrawlSite,
    CrawlWrites,
    NextSite,
    PageAsk,
    SiteOutcome,
    SiteState,
)

__all__ = ["CrawlLimits", "CrawlProgress", "run_crawl", "start_crawl"]

WORKERS = 16
#: seconds a visited host's idle connection is kept, beyond its spacing (``keepalive``)
KEEPALIVE = 2.0
#: feed addresses tried per site: its best candidates, then the usual paths
GUESSES = 4
_PROGRESS_EVERY = 0.25
_LIMIT = "the crawl's page limit is reached"  # seconds between two progress reports

Reader = Callable[[str], Awaitable[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class CrawlLimits:
    max_depth: int = 2
    max_sites: int = 1000
    max_pages: int = 10_000

    def check(self) -> None:
        if self.max_depth < 0 or self.max_sites < 1 or self.max_pages < 1:
            raise BadValueError("crawl limits: --depth must be 0 or more, --max-sites and "
                              "--max-pages 1 or more")


class CrawlProgress(Protocol):
    def update(self, counts: CrawlCounts) -> None: ...


def _seed(url: str) -> tuple[str, str]:
    text = url.strip()
    if "://" not in text:
        text = "https://" + text
    parts = urlsplit(text)
    key = site_key(text)
    if parts.scheme not in ("http", "https") or not key:
        raise BadValueError(f"{url}: not a web address to crawl from (give http(s)://site/)")
    return key, text


async def start_crawl(env: PipelineEnv, seeds: Sequence[str], limits: CrawlLimits) -> int:
    """Store a new crawl with its seeds queued; its id. Bad seeds or limits: ConfigError."""
    limits.check()
    if not seeds:
        raise ConfigError("name at least one site to start the crawl from")
    pairs = list(dict.fromkeys(_seed(url) for url in seeds))
    crawl_id: int = await env.writer(_create, pairs, limits, env.clock())
    return crawl_id


Answers = list[tuple[str, dict[str, Any]]]  # pages answered, their answers not stored yet


def _store_answers(unit: CrawlWrites, crawl_id: int, answers: Answers) -> None:
    for url, data in answers:
        unit.finish_crawl_page(crawl_id, url, data)


def _store_and_ask(unit: CrawlWrites, crawl_id: int, site_id: int, url: str, answers: Answers
                   ) -> tuple[PageAsk, dict[str, Any] | None]:
    _store_answers(unit, crawl_id, answers)
    return unit.ask_crawl_page(crawl_id, site_id, url)


Asked = tuple[PageAsk, dict[str, Any] | None]  # what ask_crawl_page answered


Claimed = tuple[CrawlSite, str, Asked]  # a site, its robots.txt and what its ask answered


def _finish_and_claim(unit: CrawlWrites, crawl_id: int, done: tuple[int, SiteOutcome] | None,
                      answers: Answers) -> tuple[int, Claimed | None]:
    """Store the last visit's answers, end it, claim the worker's next site and ask for
    that site's robots.txt (its visit's first request): one step. How many sites the
    visit queued, and the claim."""
    _store_answers(unit, crawl_id, answers)
    queued = 0 if done is None else unit.finish_crawl_site(*done)
    site = unit.claim_crawl_site(crawl_id)
    if site is None:
        return queued, None
    robots = robots_url(site.url)
    return queued, (site, robots, unit.ask_crawl_page(crawl_id, site.id, robots))


class _Frontier:
    """The crawl's queue as this process knows it, so that a worker claims only when a site
    can be handed out (breadth first: a queued site of the smallest depth, no shallower
    one being visited) and an end of a level wakes as many workers as it opens sites.

    It starts from storage and follows every claim step. Another process working on the
    same crawl makes it wrong; the first claim that shows it (a site where none was
    expected, or none where one was) turns it *blind*: then every worker claims after
    every visit's end, as if nothing were known."""

    def __init__(self, queued: dict[int, int]) -> None:
        self.queued: Counter[int] = Counter(queued)  # by depth, not claimed yet
        self.open: Counter[int] = Counter()  # claimed here, their end not stored, by depth
        self.claiming = 0  # claim steps under way
        self.blind = False

    def claimable(self) -> int:
        """Sites a claim would find now, less the claims under way."""
        if self.blind:
            return 1
        first = min((d for d, n in self.queued.items() if n > 0), default=None)
        if first is None:
            return 0
        if any(n > 0 and d < first for d, n in self.open.items()):
            return 0
        return self.queued[first] - self.claiming

    def stepped(self, ended: tuple[int, int] | None, site: CrawlSite | None,
                expected: bool) -> None:
        """Follow a claim step: the visit it ended (its depth and the sites it queued), the
        site it claimed, and whether a claim of a worker without a visit to end was
        ``expected`` to find one."""
        if ended is not None:
            depth, queued = ended
            self.open[depth] -= 1
            self.queued[depth + 1] += queued
        elif (site is not None) != expected:
            self.blind = True
        if site is not None:
            if self.queued[site.depth] <= 0:
                self.blind = True
            self.queued[site.depth] -= 1
            self.open[site.depth] += 1


def _create(unit: CrawlWrites, pairs: list[tuple[str, str]], limits: CrawlLimits, now: Any) -> int:
    return unit.create_crawl(pairs, limits.max_depth, limits.max_sites, limits.max_pages, now)


def keepalive(spacing: float) -> float:
    """Seconds the crawl keeps a host's idle connection: past the gaps between the pages of
    one visit (the host's spacing, jitter included, and a writer step), no longer."""
    return KEEPALIVE + 2 * spacing


async def run_crawl(env: PipelineEnv, crawl_id: int, *, progress: CrawlProgress | None = None,
                    workers: int = WORKERS, rules: PageRules | None = None) -> CrawlCounts:
    """Run (or resume) a crawl until its frontier is empty; its final counts."""
    env.store.get_crawl(crawl_id)  # NotFoundError for a wrong id
    fetcher = env.fetcher.with_keepalive(keepalive(env.fetcher.limiter.delay))
    try:
        return await _run(replace(env, fetcher=fetcher), crawl_id, progress, workers, rules)
    finally:
        await fetcher.aclose()


async def _run(env: PipelineEnv, crawl_id: int, progress: CrawlProgress | None,
               workers: int, rules: PageRules | None) -> CrawlCounts:
    await env.writer(lambda unit: unit.requeue_crawl_visits(crawl_id))
    crawler = _Crawler(env, crawl_id, rules or PageRules(crawler_user_agent(env.settings.bot_url)),
                       progress)
    try:
        await asyncio.gather(*(crawler.work() for _ in range(max(1, workers))))
    finally:  # interrupted (Ctrl-C): keep what was answered, so it is not asked again
        leftovers = [answer for answers in crawler.unstored.values() for answer in answers]
        if leftovers:
            await env.writer(_store_answers, crawl_id, leftovers)
    await env.writer(lambda unit: unit.finish_crawl(crawl_id, env.clock()))
    counts = env.store.crawl_counts(crawl_id)
    if progress is not None:
        progress.update(counts)
    return counts


class _Crawler:
    def __init__(self, env: PipelineEnv, crawl_id: int, rules: PageRules,
                 progress: CrawlProgress | None) -> None:
        self.env = env
        self.crawl_id = crawl_id
        self.rules = rules
        self.max_depth = env.store.get_crawl(crawl_id).max_depth
        self.progress = progress
        self.robots = RobotsCache()
        self.inflight: dict[str, asyncio.Future[dict[str, Any]]] = {}
        # answers not stored yet, per site: each goes with the site's next writer step
        self.unstored: dict[int, Answers] = {}
        self.answered: dict[str, dict[str, Any]] = {}  # the same answers, by address
        # per site being visited: its robots.txt, asked with the claim (unused when the
        # host's rules are known: then the ask found the page asked before, and added none)
        self.asked: dict[int, tuple[str, Asked]] = {}
        self.frontier = _Frontier(env.store.crawl_queued(crawl_id))
        self.busy = 0  # workers claiming or visiting
        self.waiting: list[asyncio.Future[None]] = []
        self.over = False
        self.reported = 0.0

    # ------------------------------------------------------------ the loop
    async def work(self) -> None:
        done: tuple[CrawlSite, SiteOutcome] | None = None  # ended with the next claim
        answers: Answers = []
        while True:
            expected = self.frontier.claimable() > 0
            if done is None and not expected:
                if self.over:
                    return
                if self.busy:  # a claim now would find nothing: wait for one that can
                    await self._wait()
                    continue
                # nobody else busy: a claim says whether the crawl is over
            self.busy += 1
            self.frontier.claiming += 1
            try:
                queued, claimed = await self.env.writer(
                    _finish_and_claim, self.crawl_id,
                    None if done is None else (done[0].id, done[1]), answers)
            except BaseException:
                self.busy -= 1
                raise
            finally:
                self.frontier.claiming -= 1
            self._stored(answers)
            self.frontier.stepped(None if done is None else (done[0].depth, queued),
                                  None if claimed is None else claimed[0], expected)
            self._wake(ended=done is not None)
            done, answers = None, []
            if claimed is None:
                self.busy -= 1
                if self.busy == 0:  # nothing queued and nobody who could queue more: done
                    self.over = True
                    self._wake(ended=True)
                    return
                if self.frontier.blind:  # it cannot say when to try again: at the next end
                    await self._wait()
                continue
            site, robots, asked = claimed
            self.asked[site.id] = (robots, asked)
            try:
                outcome = await self._visit_safely(site)
            finally:
                self.asked.pop(site.id, None)
                self.busy -= 1
            done, answers = (site, outcome), self.unstored.pop(site.id, [])
            self._report()

    async def _wait(self) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append(waiter)
        try:
            await waiter
        finally:
            if waiter in self.waiting:
                self.waiting.remove(waiter)

    def _wake(self, *, ended: bool) -> None:
        """Wake as many waiting workers as there are sites to claim (all of them when the
        crawl is over, or after a visit's end when the frontier is blind)."""
        if self.over or (ended and self.frontier.blind):
            count = len(self.waiting)
        else:
            count = max(0, self.frontier.claimable())
        woken, self.waiting = self.waiting[:count], self.waiting[count:]
        for waiter in woken:
            if not waiter.done():
                waiter.set_result(None)

    def _report(self) -> None:
        now = time.monotonic()
        if self.progress is not None and now - self.reported >= _PROGRESS_EVERY:
            self.reported = now
            self.progress.update(self.env.store.crawl_counts(self.crawl_id))

    async def _visit_safely(self, site: CrawlSite) -> SiteOutcome:
        """A visit that cannot take the crawl down: an unexpected error ends the site only."""
        try:
            return await self._visit(site)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:
            return SiteOutcome(SiteState.FAILED, f"internal error: {type(exc).__name__}: {exc}")

    # ------------------------------------------------------------ one site
    async def _visit(self, site: CrawlSite) -> SiteOutcome:
        home, why = await self._page(site, site.url, self._home_reader)
        if home is None:
            return SiteOutcome(SiteState.SKIPPED, why)
        if "error" in home:
            return SiteOutcome(SiteState.FAILED, str(home["error"]))
        if home.get("feed"):  # the address itself is a feed
            feed = home["feed"]
            return SiteOutcome(SiteState.DONE, feed=CrawlFeed(feed["url"], feed["type"],
                                                              feed["title"], 10))
        feed, why = await self._feed(site, home)
        found, note = await self._blogroll(site, home)
        reasons = [r for r in (note, why) if r]
        return SiteOutcome(SiteState.DONE, "; ".join(reasons), title=home.get("title", ""),
                           abstract=home.get("abstract", ""), feed=feed, found=found)

    async def _feed(self, site: CrawlSite, home: dict[str, Any]) -> tuple[CrawlFeed | None, str]:
        """The site's feed: the declared ones first, then guesses, each fetched to prove it
        (a site that answers every address with its home page declares nothing real);
        else None and why."""
        feeds = home.get("feeds", [])
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(home["final_url"]))
        tries = [url for url, *_ in feeds] + [origin + path for path in PROBE_PATHS]
        scores = {url: score for url, _, _, score, _ in feeds}
        pages = 0
        for url in list(dict.fromkeys(tries))[:GUESSES]:
            data, _ = await self._page(site, url, self._probe_reader)
            if data is not None and data.get("feed"):
                feed = data["feed"]
                return CrawlFeed(feed["url"], feed["type"], feed["title"],
                                 scores.get(url, PROBE_SCORE)), ""
            pages += bool(data and data.get("html"))
        if pages == GUESSES:
            return None, (f"no feed found: the {GUESSES} addresses tried all answer with an "
                          "HTML page (a site that answers every path)")
        return None, "no feed found"

    async def _blogroll(self, site: CrawlSite, home: dict[str, Any]
                        ) -> tuple[list[NextSite], str]:
        if site.depth >= self.max_depth:
            return [], ""
        roll, total = home.get("roll", []), int(home.get("roll_total", 0))
        for url in home.get("roll_pages", []) if not roll else ():
            data, _ = await self._page(site, url, self._roll_reader)
            if data is not None and data.get("roll"):
                roll, total = data["roll"], int(data["roll_total"])
                break
        own = site_key(home["final_url"])
        found = [NextSite(key, url, text) for url, text in roll
                 if (key := site_key(url)) and key != own]
        note = (f"link farm: its blogroll names {total} sites, the first {len(roll)} followed"
                if total > len(roll) else "")
        return found, note

    # ------------------------------------------------------------ one page
    async def _page(self, site: CrawlSite, url: str, read: Callable[[str], Reader]
                    ) -> tuple[dict[str, Any] | None, str]:
        """What the crawler made of ``url`` (stored or fetched now), or None and why not."""
        refusal = await self._refusal(site, url)
        if refusal:
            return None, refusal
        data = await self._once(site, url, read(url))
        if data.get("limit"):
            return None, _LIMIT
        return data, ""

    async def _refusal(self, site: CrawlSite, url: str) -> str:
        """Why ``url`` may not be fetched ('' when it may): robots.txt, or the page limit."""
        if not self.robots.known(url):
            verdict = await self._once(site, robots_url(url), self._robots_reader(url))
            if verdict.get("limit"):
                return _LIMIT
            self.robots.learn(url, verdict)
        if self.robots.allowed(url):
            return ""
        note = self.robots.note(url)  # set when the host gave no usable robots.txt
        return f"{note}: the host is left alone" if note else f"robots.txt disallows {url}"

    async def _once(self, site: CrawlSite, url: str, read: Reader) -> dict[str, Any]:
        """The stored answer for ``url``, or fetch it (once, even with several askers)."""
        key = url.split("#", 1)[0]  # as sent: /feed and /feed/ are two pages to a server
        waiting = self.inflight.get(key)
        if waiting is not None:
            return await asyncio.shield(waiting)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.inflight[key] = future
        try:
            data = await self._ask_and_read(site, key, url, read)
        except BaseException:
            future.set_result({"error": f"{url}: the request was interrupted"})
            raise
        finally:
            self.inflight.pop(key, None)
        future.set_result(data)
        return data

    async def _ask_and_read(self, site: CrawlSite, key: str, url: str,
                            read: Reader) -> dict[str, Any]:
        answered = self.answered.get(key)
        if answered is not None:  # answered for another site, not stored yet
            return answered
        ask, stored = await self._ask(site, key)
        if ask is PageAsk.DONE and stored is not None:
            return stored
        if ask is PageAsk.LIMIT:
            return {"limit": True}
        data = await read(url)
        # stored with the site's next step (its next page, or its end): one step less per
        # page, and no answer is used by the crawl's rows before it is stored
        self.answered[key] = data
        self.unstored.setdefault(site.id, []).append((key, data))
        return data

    async def _ask(self, site: CrawlSite, key: str) -> Asked:
        """Record ``key`` as asked (with the site's answers not stored yet), unless the
        claim asked it already. An "asked before" from the claim is asked again: by now
        the page may be answered."""
        robots, asked = self.asked.pop(site.id, ("", (PageAsk.ASKED, None)))
        if robots == key and asked[0] is not PageAsk.ASKED:
            return asked
        answers = self.unstored.pop(site.id, [])
        try:
            asked = await self.env.writer(_store_and_ask, self.crawl_id, site.id, key, answers)
        except BaseException:
            self.unstored[site.id] = answers + self.unstored.get(site.id, [])
            raise
        self._stored(answers)
        return asked

    def _stored(self, answers: Answers) -> None:
        for key, _ in answers:
            self.answered.pop(key, None)

    def _robots_reader(self, url: str) -> Reader:
        return lambda robots: fetch_robots(self.env.fetcher, robots, self.rules.user_agent,
                                           self.rules.timeout)

    def _home_reader(self, url: str) -> Reader:
        return lambda u: read_home(self.env.fetcher, u, self.rules)

    def _probe_reader(self, url: str) -> Reader:
        return lambda u: read_probe(self.env.fetcher, u, self.rules)

    def _roll_reader(self, url: str) -> Reader:
        return lambda u: read_roll_page(self.env.fetcher, u, self.rules)
