"""The extraction job end to end vs a bare fetch-and-trafilatura loop, same run.

The 102 pages of ../shared/eval/extraction/ are served on 127.0.0.1; each becomes
a pending item of one source. tidings runs ``extract_pending`` (fetch, archive,
three extractors, sanitize, image attempts, upsert as a new version); the peer
fetches the same pages through the same guarded fetcher and runs
``trafilatura.extract`` with defaults, storing nothing. Both use 4 workers; the
per-host delay is 0 (one host serves everything). Image hosts are not resolved
(no network): every image fails at once, as an offline run would.

    .venv/bin/python benchmarks/extract_job.py [--rounds 3] [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import trafilatura
from aiohttp import web

from tidings.app import Tidings
from tidings.model import ItemData
from tidings.net import Fetcher, ResolveError, decode_body
from tidings.pipeline.extraction import extract_pending
from tidings.pipeline.upsert import upsert_items
from tidings.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT.parent / "shared" / "eval" / "extraction" / "html"
WORKERS = 4


class Offline:
    async def resolve(self, host: str, port: int) -> list[str]:
        raise ResolveError(f"{host}: benchmark runs offline")


async def serve(pages: dict[str, bytes]) -> tuple[web.AppRunner, str]:
    async def handle(request: web.Request) -> web.Response:
        return web.Response(body=pages[request.match_info["id"]], content_type="text/html",
                            charset="utf-8")

    app = web.Application()
    app.router.add_get("/p/{id}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}"


async def tidings_round(base: str, ids: list[str]) -> tuple[float, str]:
    data = Path(tempfile.mkdtemp(prefix="tidings-xjob-"))
    settings = load_settings(data, env={}, overrides={
        "allow_private_hosts": "127.0.0.1", "per_host_delay": 0,
        "per_host_concurrency": WORKERS, "extract_concurrency": WORKERS})
    t = Tidings.open(settings, create=True)
    source = await t.sources.create(base + "/feed.xml", source_id="bench")
    now = datetime.now(UTC)
    await t.write(lambda unit: upsert_items(unit, source, [
        ItemData(title=f"page {i}", url=f"{base}/p/{i}", summary="teaser") for i in ids], now))
    async with Fetcher(settings, resolver=Offline()) as fetcher:
        env = replace(t.pipeline_env(), fetcher=fetcher)
        started = time.perf_counter()
        report = await extract_pending(env, limit=len(ids))
        seconds = time.perf_counter() - started
    t.close()
    return seconds, f"ok {report.ok}, unconfirmed {report.unconfirmed}, failed {report.failed}"


async def peer_round(base: str, ids: list[str], settings_dir: Path) -> float:
    settings = load_settings(settings_dir, env={}, overrides={
        "allow_private_hosts": "127.0.0.1", "per_host_delay": 0,
        "per_host_concurrency": WORKERS})
    gate = asyncio.Semaphore(WORKERS)
    async with Fetcher(settings, resolver=Offline()) as fetcher:

        async def one(page_id: str) -> None:
            async with gate:
                resp = await fetcher.fetch(f"{base}/p/{page_id}")
                await asyncio.to_thread(trafilatura.extract, decode_body(resp))

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in ids))
        return time.perf_counter() - started


async def main(rounds: int, limit: int) -> None:
    files = sorted(PAGES.glob("*.html.gz"))[: limit or None]
    if not files:
        sys.exit(f"no pages in {PAGES}")
    pages = {f.name.split(".")[0]: gzip.decompress(f.read_bytes()) for f in files}
    runner, base = await serve(pages)
    ids = list(pages)
    ours: list[float] = []
    peer: list[float] = []
    note = ""
    try:
        for _ in range(rounds):
            seconds, note = await tidings_round(base, ids)
            ours.append(seconds)
            peer.append(await peer_round(base, ids, Path(tempfile.mkdtemp())))
    finally:
        await runner.cleanup()
    mine, theirs = statistics.median(ours), statistics.median(peer)
    print(f"{len(ids)} pages, {WORKERS} workers, median of {rounds} rounds")
    print(f"tidings extract_pending : {mine:6.2f} s  {len(ids) / mine:6.1f} pages/s  ({note})")
    print(f"fetch + trafilatura     : {theirs:6.2f} s  {len(ids) / theirs:6.1f} pages/s")
    print(f"ratio tidings/peer      : {mine / theirs:6.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.limit))
