"""What a new user trips over in the web reader (issue 15): an empty Today that
explains itself, words instead of figures."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import httpx

import test_web_support as support
from tidings.app import Tidings
from tidings.settings import Settings


def page_of(tid: Tidings, settings: Settings, path: str) -> str:
    """One page from a reader started for it (nothing cached from before)."""
    server = support.serve_web(tid, settings)
    try:
        return httpx.get(server.url + path).text
    finally:
        server.stop()


def test_an_empty_today_says_why_and_links_to_the_history(settings: Settings) -> None:
    tid = support.open_archive(settings)
    support.add_source(tid, "alpha", "Alpha")
    empty = page_of(tid, settings, "/")
    assert "No items yet" in empty and 'href="/add"' in empty
    old = [support.Spec("Old story", age=timedelta(days=30), backfill=True),
           support.Spec("Older story", age=timedelta(days=60), backfill=True)]
    ids = support.add_items(tid, old)
    page = page_of(tid, settings, "/")  # a fresh reader: no figures cached
    tid.close()
    page = " ".join(page.split())
    assert "Nothing new in the last 24 hours" in page, page[page.find("empty"):][:900]
    assert "first collection" in page and "2 items" in page, page[page.find("today-empty"):][:900]
    assert 'id="today-all" href="/all"' in page or 'href="/all" id="today-all"' in page
    assert f'href="/item/{ids[0]}" id="today-newest">Old story</a>' in page
    assert "1 month ago" in page


def _csrf(html: str) -> str:
    return html.split('<meta name="csrf" content="')[1].split('"', maxsplit=1)[0]


def test_collect_now_per_source_and_for_all_from_the_sources_page(tmp_path: Path) -> None:
    """In a real `tidings serve`, which also logs each round's outcome on its console."""
    from farm import Farm, running_farm

    data = tmp_path / "data"
    with running_farm(Farm(feeds=8)) as farm:
        (tmp_path / "f.opml").write_bytes(farm.opml())
        for args in (["init", "--empty"], ["import-opml", str(tmp_path / "f.opml")]):
            subprocess.run([sys.executable, "-m", "tidings", "--data", str(data), *args],
                           check=True, capture_output=True)
        listed = subprocess.run([sys.executable, "-m", "tidings", "--data", str(data),
                                 "sources", "--json"], check=True, capture_output=True)
        ids = {r["url"].rsplit("/", 1)[-1].removesuffix(".xml"): r["id"]
               for r in json.loads(listed.stdout)}
        with serving(data) as (base, console):
            # the scheduler's first round takes every source (all are due): let it end
            support.wait_until(lambda: "round: " in console(), timeout=30)
            with httpx.Client(base_url=base, follow_redirects=True, timeout=30) as http:
                listing = http.get("/sources").text
                token = _csrf(listing)
                page = http.post(f"/sources/{ids['1']}/collect", data={"csrf": token})
                # the scheduler fetched it a moment ago: the farm answers 304 now
                assert "Collected just now: not modified" in page.text
                failing = http.post(f"/sources/{ids['7']}/collect", data={"csrf": token})
                assert "Collected just now: failed" in failing.text
                assert "HTTP 404" in failing.text and "Retry now" in failing.text
                assert http.post("/collect", data={"csrf": "forged"}).status_code == 403
                started = http.post("/collect", data={"csrf": token})
                assert "Collecting 8 sources now" in started.text
                support.wait_until(lambda: "collect now: 7 of 8 sources ok" in console(),
                                   timeout=30)
                assert ">Retry</button>" in http.get("/sources").text
        log = console()
    assert "collect now: 7 of 8 sources ok; failed: " in log, log
    assert re.search(r"round: \d+ of \d+ sources? ok", log), log


@contextmanager
def serving(data: Path) -> Iterator[tuple[str, Callable[[], str]]]:
    """`tidings serve` on a free port as a subprocess; yields its URL and its console."""
    port = support.free_port()
    env = {**os.environ, "TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1",
           "TIDINGS_PER_HOST_DELAY": "0"}
    out = data.parent / "console.log"
    with out.open("w") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "tidings", "--data", str(data), "serve",
                                 "--port", str(port)], env=env, stdout=sink, stderr=sink)
        try:
            support.wait_until(lambda: _answers(port), timeout=30)
            yield f"http://127.0.0.1:{port}", out.read_text
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)


def _answers(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/offline", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_a_source_never_collected_is_new_not_ok(settings: Settings) -> None:
    tid = support.open_archive(settings)
    support.add_source(tid, "alpha", "Alpha")
    page = page_of(tid, settings, "/sources")
    tid.close()
    assert '<span class="health h-new">1 new</span>' in page
    assert 'aria-label="health new"' in page and "1 ok" not in page
