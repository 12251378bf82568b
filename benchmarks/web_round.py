"""The web reader while a collection round writes, in the same process (`tidings serve`).

`tidings serve` runs the web server and the scheduler on one event loop; every
write either makes goes through the one writer thread. This measures what a
reader feels during the heaviest thing the scheduler does - a first round over
the shared feed farm's 1,000 feeds, about 24,000 new items - against the same
pages when nothing runs:

1. the farm starts (``../shared/bench/feedfarm.py``, no latency, 32 hosts);
2. an archive is prepared: 20,000 items of 200 other sources (so the list is a
   real list), the farm's feeds added as sources;
3. the server starts (the page cache off: every request renders from the
   database), its scheduler claims every farm feed at its first tick, and wrk
   loads the list (``/all``) and ``/healthz`` during the round, 32 connections;
4. when the round has ended, the same loads again.

    apt-get install wrk
    .venv/bin/python benchmarks/web_round.py [--feeds 1000] [--duration 8]

Printed: req/s, p50, p99 of each load, the round's length and its items, and the
floor of the refit issue (list p99 < 100 ms while a round is writing).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import tempfile
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sharedfarm import start_farm
from webload import Load, free_port, wait_healthy, wrk

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")
TIDINGS = str(ROOT / ".venv" / "bin" / "tidings")
ENV = {**os.environ, "TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.0/8",
       "TIDINGS_PER_HOST_DELAY": "0", "TIDINGS_SOURCES_PER_TICK": "100000",
       "TIDINGS_TICK_SECONDS": "3600", "TIDINGS_EXTRACT_PER_ROUND": "0",
       "TIDINGS_MEMORY_LIMIT_MB": "0"}

CHILD = """
import asyncio, sys
import uvicorn
from tidings.app import Tidings
from tidings.settings import load_settings
from tidings.web.server import _run, create_app

settings = load_settings(sys.argv[1])
tidings = Tidings.open(settings)
app = create_app(tidings, settings, page_ttl=0)
config = uvicorn.Config(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
asyncio.run(_run(uvicorn.Server(config), tidings))
"""


def prepare(data: Path, feeds_url: str, items: int) -> None:
    """An archive with ``items`` items of 200 other sources, plus the farm's feeds."""
    from tidings.identity import title_fingerprint
    from tidings.model import BodyState, Source, SourceKind
    from tidings.settings import load_settings
    from tidings.store import open_storage
    from tidings.store.base import ItemFields, NewItem, UpsertBatch

    run([TIDINGS, "--data", str(data), "init", "--empty"])
    store = open_storage(load_settings(data, env={}))
    now, rng = datetime.now(UTC), random.Random(7)
    for s in range(200):
        store.add_source(Source(id=f"old{s}", kind=SourceKind("rss"), title=f"Old {s}",
                                url=f"https://old{s}.example/feed", created_at=now,
                                next_fetch_at=now + timedelta(days=1)))
    creates = []
    for n in range(items):
        title = f"Archived story {n} about " + " ".join(rng.sample(
            ["models", "chips", "agents", "robots", "data", "code", "papers"], 3))
        when = now - timedelta(minutes=n * 7)
        creates.append(NewItem(
            key=f"old:{n}", source_id=f"old{n % 200}", discovered_at=when, backfill=False,
            fields=ItemFields(title=title, url=f"https://old{n % 200}.example/{n}",
                              summary="", body="<p>" + "text " * 200 + "</p>",
                              body_state=BodyState.OK, published_at=when,
                              content_hash=f"h{n}", title_fp=title_fingerprint(title))))
    store.apply_upserts(UpsertBatch(creates=creates))
    while store.index_pending(5000):
        pass
    store.close()
    opml = data / "farm.opml"
    opml.write_bytes(get(feeds_url + "/feeds.opml"))
    run([TIDINGS, "--data", str(data), "import-opml", str(opml)])


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read()


def run(cmd: list[str]) -> None:
    subprocess.run(cmd, check=True, env=ENV, stdout=subprocess.DEVNULL)


def round_state(data: Path, feeds: int) -> tuple[bool, int]:
    """Whether every farm feed has a finished run, and the items created so far."""
    from tidings.settings import load_settings
    from tidings.store import open_storage

    store = open_storage(load_settings(data, env={}))
    try:
        runs = [r for sid, r in store.last_runs().items() if not sid.startswith("old")]
        done = len(runs) == feeds and all(r.finished_at is not None for r in runs)
        return done, sum(r.created for r in runs)
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--feeds", type=int, default=1000)
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--duration", type=int, default=8)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed for the load: apt-get install wrk")
    with tempfile.TemporaryDirectory(prefix="tidings-web-round-") as tmp:
        data = Path(tmp) / "data"
        farm, farm_url = start_farm(args.feeds, 32, Path(tmp) / "farm.url", latency="none")
        try:
            prepare(data, farm_url, args.items)
            measure(data, args)
        finally:
            farm.terminate()
            farm.wait()


def measure(data: Path, args: argparse.Namespace) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([PYTHON, "-c", CHILD, str(data), str(port)], env=ENV)
    try:
        wait_healthy(server, base)
        started = time.monotonic()
        during = {"list": wrk(base + "/all", args.duration),
                  "healthz": wrk(base + "/healthz", 2)}
        while not (state := round_state(data, args.feeds))[0]:
            time.sleep(0.5)
        length = time.monotonic() - started
        idle = {"list": wrk(base + "/all", args.duration), "healthz": wrk(base + "/healthz", 2)}
    finally:
        server.terminate()
        server.wait(60)
    report(during, idle, length, state[1], args)


def report(during: dict[str, Load], idle: dict[str, Load], length: float, created: int,
           args: argparse.Namespace) -> None:
    print(f"round over {args.feeds} farm feeds in `serve` ({length:.1f} s until it ended, "
          f"{created} new items), archive of {args.items} items, "
          f"page cache off, wrk -c32 -d{args.duration}s, load {os.getloadavg()[0]:.1f}")
    print("| endpoint | while the round writes: req/s, p50 ms, p99 ms | idle: req/s, p50, p99 |")
    print("| --- | --- | --- |")
    for name in ("list", "healthz"):
        d, i = during[name], idle[name]
        print(f"| {name} | {d.rate:.0f}, {d.p50:.1f}, {d.p99:.1f} "
              f"| {i.rate:.0f}, {i.p50:.1f}, {i.p99:.1f} |")
    met = "met" if during["list"].p99 < 100 else "NOT met"
    print(f"floor: list p99 < 100 ms while a round writes: {during['list'].p99:.1f} ms ({met})")


if __name__ == "__main__":
    main()
