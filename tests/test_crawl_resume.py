"""A crawl killed with SIGKILL five times at random moments resumes to the same finds
(R-DISC-3) and asks for no page twice, except a page that was in flight at a kill.

No crawler can promise more than that: a request the server answered just before
the kill, whose answer was not yet stored, is unknown to the resumed crawl. The
crawl records every address *before* asking for it, so the test can name those
pages exactly (``crawl_unanswered`` after each kill) and check that they, and
only they, were asked again: once for each kill that caught them in flight.
"""

from __future__ import annotations

import asyncio
import random
import signal
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from crawlweb import build_web, web_app
from netservers import serve
from tidings.store.sqlite import SqliteStorage

pytestmark = pytest.mark.slow
CHILD = Path(__file__).parent / "crawl_child.py"
DEPTH = 3
WORKERS = 8  # crawl_child.py's; each worker has one page in flight at most


async def run_child(data: Path, port: int, kill_after: int | None,
                    requests: dict[tuple[str, str], int],
                    sig: signal.Signals = signal.SIGKILL) -> int | None:
    """Run the child; with ``kill_after``, send it ``sig`` once the server saw that many
    more requests. Returns its exit code (None when killed by SIGKILL)."""
    proc = await asyncio.create_subprocess_exec(sys.executable, str(CHILD), str(data),
                                                str(port), str(DEPTH))
    start = sum(requests.values())
    while proc.returncode is None:
        if kill_after is not None and sum(requests.values()) - start >= kill_after:
            proc.send_signal(sig)
            code = await proc.wait()
            return None if sig == signal.SIGKILL else code
        await asyncio.sleep(0.002)
    return proc.returncode


def unanswered(data: Path) -> set[tuple[str, str]]:
    with SqliteStorage(data / "tidings.sqlite3") as store:
        crawls = store.list_crawls(limit=1)
        urls = store.crawl_unanswered(crawls[0].id) if crawls else []
    pairs = set()
    for url in urls:
        parts = urlsplit(url)
        pairs.add((parts.hostname or "", parts.path + (f"?{parts.query}" if parts.query else "")))
    return pairs


async def test_five_kills_same_finds_nothing_asked_twice(tmp_path: Path) -> None:
    web = build_web()
    data = tmp_path / "data"
    rng = random.Random()
    async with serve(web_app(web)) as base:
        web.port = int(base.rsplit(":", 1)[1])
        in_flight: Counter[tuple[str, str]] = Counter()  # pages in flight, kills each
        kills = 0
        while kills < 5:
            code = await run_child(data, web.port, rng.randint(5, 120), web.requests)
            if code is not None:
                break  # finished before the kill: the crawl is smaller than the dice
            kills += 1
            in_flight.update(unanswered(data))
        assert kills == 5, "the crawl ended before five kills landed"
        assert await run_child(data, web.port, None, web.requests) == 0

    with SqliteStorage(data / "tidings.sqlite3") as store:
        (crawl,) = store.list_crawls()
        found = {f.feed_url: f.depth for f in store.crawl_findings(crawl.id)}
        assert store.crawl_unanswered(crawl.id) == []
    assert found == web.expected(DEPTH)
    repeated = {key: n for key, n in web.requests.items() if n > 1}
    assert set(repeated) <= set(in_flight), "only pages in flight at a kill are asked again"
    # once more for every kill that caught it in flight (a page can be caught twice)
    assert all(n <= 1 + in_flight[key] for key, n in repeated.items())
    assert not web.disallowed() & set(web.requests)


async def test_ctrl_c_leaves_a_crawl_that_resumes_without_asking_twice(
        tmp_path: Path) -> None:
    """SIGINT (Ctrl-C) cancels the crawl instead of killing it: the answers its workers
    hold are stored on the way out, so what is left unanswered is what was in flight
    (a page per worker at most), and the resumed crawl asks nothing else again."""
    web = build_web()
    data = tmp_path / "data"
    async with serve(web_app(web)) as base:
        web.port = int(base.rsplit(":", 1)[1])
        code = await run_child(data, web.port, 20, web.requests, sig=signal.SIGINT)
        assert code is not None and code != 0, "the crawl ended before the interrupt"
        in_flight = unanswered(data)
        assert len(in_flight) <= WORKERS
        with SqliteStorage(data / "tidings.sqlite3") as store:
            (crawl,) = store.list_crawls()
            assert crawl.state == "running"  # not marked done: `--resume` picks it up
        assert await run_child(data, web.port, None, web.requests) == 0
    with SqliteStorage(data / "tidings.sqlite3") as store:
        found = {f.feed_url: f.depth for f in store.crawl_findings(crawl.id)}
    assert found == web.expected(DEPTH)
    assert {key for key, n in web.requests.items() if n > 1} <= in_flight
