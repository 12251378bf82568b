"""Web reader throughput and latency on a 200,000-item archive.

The server runs in its own process (uvicorn, as `tidings serve` runs it); the load
comes from wrk (apt package ``wrk``) in another process: 32 connections, a few
seconds per endpoint. Measured with the page cache off (every request renders
from the database): the Today list, an article page (random ids), a search
(rotating English and Chinese terms), and ``/healthz`` - a trivial endpoint of
the same app in the same run, the framework's ceiling. Then, in a second server
with the default short page cache, ``/healthz`` and the Today list again
(articles and searches are never page-cached). Printed: req/s, p50, p99, the
ratio to that server's healthz, and whether the targets are met.

    .venv/bin/python benchmarks/web.py [--items 200000] [--duration 8]

The archive is built once under --data (default /tmp/tidings-bench-web) and reused
for six hours (its items end at its build time, and Today shows the last 24 hours);
an archive of an older schema is migrated and its search index caught up first.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

from webload import Load, free_port, rotation, wait_healthy, wrk

WORDS = [
    "model", "agent", "data", "training", "release", "open", "source", "paper", "benchmark",
    "chip", "cloud", "robot", "vision", "language", "reasoning", "safety", "policy", "startup",
    "funding", "research", "lab", "compute", "inference", "token", "context", "memory",
    "search", "code", "developer", "update", "launch", "study"
]
CJK = [
    "人工智能", "大语言模型", "开源", "发布", "研究", "芯片", "机器人",
    "数据", "训练", "推理", "安全", "政策", "融资", "实验室",
    "算力", "代码", "开发者", "更新", "论文", "评测",
]


#: what ``build`` makes; a kept archive made by another version is built again
ARCHIVE_VERSION = "2"  # raise it whenever ``build`` makes a different archive
#: seconds after which a kept archive is built again (its last 24 hours thin out)
MAX_AGE = 6 * 3600


def _title(n: int) -> str:
    """Title number ``n``: the same every time it is asked for (reprints ask twice)."""
    rng = random.Random(n)
    if n % 5 == 0:
        return "".join(rng.sample(CJK, 3)) + f"第{n}期"
    return " ".join(rng.sample(WORDS, 6)).capitalize() + f" #{n}"


def build(data: Path, items: int) -> None:
    """Write the archive: 200 sources, ``items`` items over 400 days, 3% reprints."""
    from tidings.identity import title_fingerprint
    from tidings.model import BodyState, Source, SourceKind
    from tidings.settings import load_settings
    from tidings.store import open_storage
    from tidings.store.base import ItemFields, NewItem, UpsertBatch

    settings = load_settings(data, env={})
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    store = open_storage(settings)  # the archive is built with storage calls, not collected
    now = datetime.now(UTC)
    for s in range(200):
        store.add_source(Source(id=f"s{s}", kind=SourceKind("rss"), title=f"Source {s}",
                                url=f"https://s{s}.example/feed", created_at=now))
    rng = random.Random(7)
    span = 400 * 86400
    started = time.monotonic()
    for start in range(0, items, 5000):
        creates = []
        for n in range(start, min(items, start + 5000)):
            title = _title(n - 1 if n % 33 == 1 else n)  # every 33rd repeats: a reprint
            body = "".join(f"<p>{' '.join(rng.choices(WORDS + CJK, k=40))}.</p>" for _ in range(4))
            when = now - timedelta(seconds=span * (1 - n / items) + rng.random() * 60)
            fields = ItemFields(title=title, url=f"https://s{n % 200}.example/p/{n}", summary="",
                                body=body, body_state=BodyState.OK, published_at=when,
                                content_hash=f"h{n}", title_fp=title_fingerprint(title))
            creates.append(NewItem(key=f"bench:{n}", source_id=f"s{n % 200}", fields=fields,
                                   discovered_at=when + timedelta(minutes=5), backfill=False))
        store.apply_upserts(UpsertBatch(creates=creates))
    print(f"built {items} items in {time.monotonic() - started:.0f}s; indexing...", flush=True)
    started = time.monotonic()
    while store.index_pending(2000):
        pass
    print(f"indexed in {time.monotonic() - started:.0f}s", flush=True)
    store.close()
    (data / "bench-ready").write_text(f"{items} {ARCHIVE_VERSION}")


def serve(data: Path, port: int, page_ttl: float) -> None:
    import uvicorn

    from tidings.app import Tidings
    from tidings.settings import load_settings
    from tidings.web import create_app

    settings = load_settings(data, env={})
    tid = Tidings.open(settings)
    app = create_app(tid, settings, page_ttl=page_ttl)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _start(data: Path, page_ttl: float) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(data), "--port", str(port),
                             "--page-ttl", str(page_ttl)])
    url = f"http://127.0.0.1:{port}"
    wait_healthy(proc, url, timeout=30)
    return proc, url


def _cookie(url: str) -> str:
    with urllib.request.urlopen(url + "/", timeout=30) as r:
        return str(r.headers["set-cookie"]).split(";")[0]


def _wrk(url: str, paths: list[str], args: argparse.Namespace, cookie: str,
         folder: Path) -> Load:
    return wrk(url, args.duration, connections=args.connections, threads=args.threads,
               cookie=cookie, script=rotation(paths, folder))


def prepare(data: Path, items: int) -> None:
    """Build the archive, or bring a kept one up to this code's schema and index."""
    ready = data / "bench-ready"
    # the archive ends when it was built: a day later the Today list would be empty
    stale = ready.exists() and time.time() - ready.stat().st_mtime > MAX_AGE
    if stale or not ready.exists() or ready.read_text() != f"{items} {ARCHIVE_VERSION}":
        shutil.rmtree(data, ignore_errors=True)
        build(data, items)
        return
    from tidings.app import Tidings
    from tidings.settings import load_settings

    started = time.monotonic()
    tid = Tidings.open(load_settings(data, env={}))  # applies missing migrations
    try:
        if indexed := asyncio.run(tid.search.index_pending()):
            print(f"archive migrated; {indexed} items indexed again in "
                  f"{time.monotonic() - started:.0f}s", flush=True)
    finally:
        tid.close()


def run(args: argparse.Namespace) -> None:
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed for the load: apt-get install wrk")
    data = Path(args.data)
    prepare(data, args.items)
    rng = random.Random(11)
    articles = [f"/item/{rng.randint(1, args.items)}" for _ in range(500)]
    searches = ["/search?q=" + urllib.parse.quote(q) for q in
                ("benchmark", "人工智能", "open source", "芯片 发布", "reasoning safety",
                 "\"language model\"", "开源", "robot -cloud")]
    endpoints = {"healthz (trivial)": ["/healthz"], "Today list": ["/"], "article": articles,
                 "search": searches}
    results: dict[str, Load] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for ttl, label, names in ((0.0, "no page cache", list(endpoints)),
                                  (2.0, "cached 2 s", ["healthz (trivial)", "Today list"])):
            proc, url = _start(data, ttl)
            try:
                cookie = _cookie(url)
                for name in names:
                    _wrk(url, endpoints[name], args, cookie, Path(tmp))  # warm-up, not counted
                    results[f"{name}, {label}"] = _wrk(url, endpoints[name], args, cookie,
                                                       Path(tmp))
            finally:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
    _report(results, args)


#: the issue's targets, page cache off: p99 below this many ms, and at least this
#: share of the same run's trivial endpoint's req/s
TARGETS = {"Today list": (100.0, 0.30), "article": (100.0, 0.15), "search": (300.0, 0.15)}


def _report(results: dict[str, Load], args: argparse.Namespace) -> None:
    print(f"\n{args.items} items, {args.connections} connections, {args.duration}s per endpoint,"
          f" wrk -t{args.threads}, load average {os.getloadavg()[0]:.1f}")
    print(f"{'endpoint':34} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'vs trivial':>10}")
    for name, (rps, p50, p99) in results.items():
        ceiling = results["healthz (trivial), " + name.split(", ")[1]][0]
        print(f"{name:34} {rps:8.0f} {p50:8.2f} {p99:8.2f} {rps / ceiling:9.0%}")
    ceiling = results["healthz (trivial), no page cache"][0]
    print("\ntargets, page cache off (p99, share of the trivial endpoint's req/s):")
    for name, (p99_max, share) in TARGETS.items():
        rps, _, p99 = results[f"{name}, no page cache"]
        met = p99 < p99_max and rps / ceiling >= share
        print(f"  {name:12} p99 {p99:7.1f} < {p99_max:.0f} ms, {rps / ceiling:4.0%} >= "
              f"{share:.0%}: {'met' if met else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--data", default=str(Path(tempfile.gettempdir()) / "tidings-bench-web"))
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--serve")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--page-ttl", type=float, default=2.0)
    args = parser.parse_args()
    if args.serve:
        serve(Path(args.serve), args.port, args.page_ttl)
    else:
        run(args)


if __name__ == "__main__":
    main()
