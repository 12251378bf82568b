"""The blogroll crawler against a bare breadth-first fetch of the same pages, same run.

A synthetic web of ``--sites`` blogs (default 2,000) is served from a child
process on 127.0.0.1, every ``bNNNNN.test`` host resolved there by an injected
resolver. Each site has a robots.txt (404), a home page in a WordPress-like
theme (declared feed, sidebar widgets, tag cloud, a blogroll of 3-5 other
sites) and an RSS feed; every site is reachable from site 0.

* **tidings crawl**: ``start_crawl`` + ``run_crawl`` from site 0 with the depth
  it takes to reach all, politeness off (no per-host spacing), 32 workers:
  robots.txt, home page parsed (feeds, blogroll, abstract), feed fetched and
  parsed to prove it, every page and finding written to SQLite first.
* **bare BFS** (the ceiling): plain aiohttp, 32 workers, breadth first over
  the same graph, fetching the same three pages per site and reading the
  blogroll with one regular expression - no robots rules, no parsing, no
  storage.
* **floor crawler**: the least a durable crawler adds to the bare fetch, in the
  simplest code: each home page and feed parsed by lxml (the declared feed and
  the ``target=_blank`` links taken by XPath: no scoring, no abstract, no robots
  rules) and the frontier in SQLite, a site's end committed before its links are
  queued. It says how much of the gap any crawler doing this work must pay, and
  how much is tidings' own.

The figure is sites per second (median of ``--reps``), and the ratio bare /
tidings; CPU milliseconds per site of this process (the crawl's writer thread
included) are printed too, being steadier than wall time on a shared machine.
Peak memory of the crawl is the resident set of this process (sampled every
50 ms; the server is another process). Memory for 10,000 sites:

    .venv/bin/python benchmarks/crawl.py [--sites 2000] [--reps 3]
    .venv/bin/python benchmarks/crawl.py --sites 10000 --reps 1
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import re
import sqlite3
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from urllib.parse import urljoin

import aiohttp
import psutil
from aiohttp import web
from lxml import etree

from tidings.app import Tidings
from tidings.net import Fetcher
from tidings.pipeline.crawl import CrawlLimits, run_crawl, start_crawl
from tidings.settings import load_settings

WORKERS = 32
_ROLL = re.compile(r'<li><a href="(http://[^"]+)" target="_blank">')


def graph(sites: int, seed: int = 7) -> list[list[int]]:
    """Site ``i`` links to its three children in a ternary tree, then random sites up to
    3-5 links (fewer than three is no blogroll)."""
    rng = random.Random(seed)
    out: list[list[int]] = []
    for i in range(sites):
        links = [k for k in (3 * i + 1, 3 * i + 2, 3 * i + 3) if k < sites]
        want = rng.randint(3, 5)
        while len(links) < want:
            k = rng.randrange(sites)
            if k != i and k not in links:
                links.append(k)
        out.append(links)
    return out


def depth_needed(links: list[list[int]]) -> int:
    depth, level, seen = 0, [0], {0}
    while True:
        nxt = [k for i in level for k in links[i] if k not in seen and not seen.add(k)]  # type: ignore[func-returns-value]
        if not nxt:
            return depth
        depth, level = depth + 1, nxt


def host(i: int) -> str:
    return f"b{i:05d}.test"


def home(i: int, links: list[int], port: int) -> bytes:
    roll = "".join(f'<li><a href="http://{host(k)}:{port}/" target="_blank">Blog {k}</a></li>'
                   for k in links)
    tags = " ".join(f'<a href="/tag/{w}/">{w}</a>' for w in ("tea", "trains", "linux", "notes"))
    posts = "".join(f'<article><h2><a href="/2024/0{j + 1}/post/">Post {j}</a></h2><p>Blog {i} '
                    f'writes about tea and trains at length, week after week, for years.</p>'
                    f'</article>' for j in range(3))
    return (f'<!DOCTYPE html><html><head><title>Blog {i}</title><meta name="generator" '
            f'content="WordPress 6.4"><link rel="alternate" type="application/rss+xml" '
            f'href="/feed/"></head><body><header><nav><a href="/">Home</a> <a href="/about/">'
            f'About</a></nav></header><main>{posts}</main><aside><section><h3>Tags</h3>{tags}'
            f'</section><section><h3>Blogroll</h3><ul class="blogroll">{roll}</ul></section>'
            f'</aside><footer>&copy; 2024 Blog {i}</footer></body></html>').encode()


def feed(i: int, port: int) -> bytes:
    return (f'<?xml version="1.0"?><rss version="2.0"><channel><title>Blog {i}</title>'
            f'<link>http://{host(i)}:{port}/</link><description>d</description><item>'
            f'<title>Post</title><link>http://{host(i)}:{port}/p/1</link></item></channel>'
            f'</rss>').encode()


def _serve(sites: int, port_out: multiprocessing.SimpleQueue[int]) -> None:
    links = graph(sites)
    port_box: list[int] = []

    async def handle(request: web.Request) -> web.Response:
        name = request.host.split(":", 1)[0]
        i = int(name[1:6])
        if request.path == "/":
            return web.Response(body=home(i, links[i], port_box[0]), content_type="text/html")
        if request.path == "/feed/":
            return web.Response(body=feed(i, port_box[0]), content_type="application/rss+xml")
        raise web.HTTPNotFound()

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port_box.append(runner.addresses[0][1])
        port_out.put(port_box[0])
        await asyncio.Event().wait()

    asyncio.run(main())


class LoopbackResolver:
    async def resolve(self, name: str, port: int) -> list[str]:
        return ["127.0.0.1"]


class PeakRss:
    def __init__(self) -> None:
        self.peak = 0
        self._task: asyncio.Task[None] | None = None

    async def _sample(self) -> None:
        proc = psutil.Process()
        while True:
            self.peak = max(self.peak, proc.memory_info().rss)
            await asyncio.sleep(0.05)

    def __enter__(self) -> PeakRss:
        self._task = asyncio.get_running_loop().create_task(self._sample())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def tidings_crawl(port: int, sites: int, depth: int) -> tuple[float, float, int, int]:
    """(seconds, CPU seconds, feeds found, peak RSS bytes) of one crawl in a fresh archive."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(Path(tmp), env={}, overrides={
            "allow_private_hosts": "127.0.0.1", "per_host_delay": 0,
            "per_host_concurrency": 4})
        tidings = Tidings.open(settings, create=True)
        fetcher = Fetcher(settings, resolver=LoopbackResolver())
        env = replace(tidings.pipeline_env(), fetcher=fetcher)
        try:
            with PeakRss() as rss:
                start, cpu = time.perf_counter(), time.process_time()
                crawl_id = await start_crawl(env, [f"http://{host(0)}:{port}/"],
                                             CrawlLimits(depth, sites + 10, 10 * sites))
                counts = await run_crawl(env, crawl_id, workers=WORKERS)
                took = time.perf_counter() - start
                cpu = time.process_time() - cpu
            return took, cpu, counts.feeds, rss.peak
        finally:
            await fetcher.aclose()
            await tidings.aclose()


async def bare_bfs(port: int, depth: int) -> tuple[float, float, int]:
    """(seconds, CPU seconds, sites) of a plain breadth-first fetch: robots.txt, home, feed
    per site."""
    connector = aiohttp.TCPConnector(limit=WORKERS, resolver=_AiohttpLoopback())
    async with aiohttp.ClientSession(connector=connector) as session:
        start, cpu = time.perf_counter(), time.process_time()
        seen = {0}
        level = [0]
        for d in range(depth + 1):
            nxt: list[int] = []
            queue = list(level)

            async def worker(nxt: list[int] = nxt, queue: list[int] = queue, d: int = d) -> None:
                while queue:
                    i = queue.pop()
                    base = f"http://{host(i)}:{port}"
                    async with session.get(base + "/robots.txt") as r:
                        await r.read()
                    async with session.get(base + "/") as r:
                        page = (await r.read()).decode()
                    async with session.get(base + "/feed/") as r:
                        await r.read()
                    if d < depth:
                        for url in _ROLL.findall(page):
                            k = int(url.split("//b", 1)[1][:5])
                            if k not in seen:
                                seen.add(k)
                                nxt.append(k)

            await asyncio.gather(*(worker() for _ in range(WORKERS)))
            level = nxt
        return time.perf_counter() - start, time.process_time() - cpu, len(seen)


async def floor_bfs(port: int, depth: int) -> tuple[float, float, int]:
    """(seconds, CPU seconds, sites) of the least a durable crawler does on top of the bare
    fetch, in the simplest code: the bare fetch, plus the home page parsed by lxml (its
    declared feed and its ``target=_blank`` links, no scoring), the feed parsed by lxml,
    and the frontier in SQLite (a row per site found, its visit's end stored and
    committed before its links are queued), on the loop's thread."""
    with tempfile.TemporaryDirectory() as tmp:
        db = sqlite3.connect(Path(tmp) / "floor.db", isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE TABLE sites (id INTEGER PRIMARY KEY, url TEXT UNIQUE, depth INT, "
                   "state TEXT, feed TEXT)")
        connector = aiohttp.TCPConnector(limit=WORKERS, resolver=_AiohttpLoopback())
        async with aiohttp.ClientSession(connector=connector) as session:
            start, cpu = time.perf_counter(), time.process_time()
            db.execute("INSERT INTO sites (url, depth, state) VALUES (?, 0, 'queued')",
                       (f"http://{host(0)}:{port}/",))
            for d in range(depth + 1):
                queue = [r[0] for r in db.execute(
                    "SELECT url FROM sites WHERE depth = ? AND state = 'queued'", (d,))]

                async def worker(queue: list[str] = queue, d: int = d) -> None:
                    while queue:
                        base = queue.pop()
                        async with session.get(base + "robots.txt") as r:
                            await r.read()
                        async with session.get(base) as r:
                            page = etree.HTML(await r.read())
                        feed = page.xpath("//link[@rel='alternate']/@href")[0]
                        async with session.get(urljoin(base, feed)) as r:
                            etree.fromstring(await r.read())
                        found = page.xpath("//a[@target='_blank']/@href") if d < depth else []
                        db.execute("BEGIN")
                        db.execute("UPDATE sites SET state = 'done', feed = ? WHERE url = ?",
                                   (feed, base))
                        db.executemany("INSERT OR IGNORE INTO sites (url, depth, state) "
                                       "VALUES (?, ?, 'queued')", [(u, d + 1) for u in found])
                        db.execute("COMMIT")

                await asyncio.gather(*(worker() for _ in range(WORKERS)))
            took, cpu = time.perf_counter() - start, time.process_time() - cpu
            sites = db.execute("SELECT count(*) FROM sites WHERE state = 'done'").fetchone()[0]
        db.close()
        return took, cpu, sites


class _AiohttpLoopback(aiohttp.abc.AbstractResolver):
    async def resolve(self, host: str, port: int = 0, family: int = 0) -> list[dict[str, object]]:
        return [{"hostname": host, "host": "127.0.0.1", "port": port, "family": 2, "proto": 0,
                 "flags": 0}]

    async def close(self) -> None:
        return None


async def main(args: argparse.Namespace) -> None:
    ports: multiprocessing.SimpleQueue[int] = multiprocessing.SimpleQueue()
    server = multiprocessing.Process(target=_serve, args=(args.sites, ports), daemon=True)
    server.start()
    port = ports.get()
    depth = depth_needed(graph(args.sites))
    rates: dict[str, list[float]] = {"tidings": [], "floor": [], "bare": []}
    cpus: dict[str, list[float]] = {"tidings": [], "floor": [], "bare": []}
    peaks: list[int] = []
    order = list(rates)
    try:
        for rep in range(args.reps):
            for name in order[rep % 3:] + order[:rep % 3]:  # each goes first once in 3 reps
                if name == "tidings":
                    took, cpu, feeds, peak = await tidings_crawl(port, args.sites, depth)
                    assert feeds == args.sites, f"found {feeds} of {args.sites} feeds"
                    peaks.append(peak)
                else:
                    took, cpu, seen = await (bare_bfs if name == "bare" else floor_bfs)(
                        port, depth)
                    assert seen == args.sites, f"{name} saw {seen} of {args.sites} sites"
                rates[name].append(args.sites / took)
                cpus[name].append(cpu * 1000 / args.sites)
    finally:
        server.kill()
    rate = {name: statistics.median(values) for name, values in rates.items()}
    cpu_ms = {name: statistics.median(values) for name, values in cpus.items()}
    print(f"sites {args.sites}, depth {depth}, {WORKERS} workers, politeness off, "
          f"{args.reps} reps (medians)")
    print(f"tidings crawl : {rate['tidings']:8.1f} sites/s  {cpu_ms['tidings']:5.2f} CPU ms/site"
          f"   peak RSS {max(peaks) / 2**20:6.1f} MiB")
    print(f"floor crawler : {rate['floor']:8.1f} sites/s  {cpu_ms['floor']:5.2f} CPU ms/site")
    print(f"bare BFS      : {rate['bare']:8.1f} sites/s  {cpu_ms['bare']:5.2f} CPU ms/site")
    print(f"ratio bare/tidings: {rate['bare'] / rate['tidings']:.2f}x (target <= 1.5x); "
          f"bare/floor: {rate['bare'] / rate['floor']:.2f}x; "
          f"floor/tidings: {rate['floor'] / rate['tidings']:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=3)
    asyncio.run(main(parser.parse_args()))
