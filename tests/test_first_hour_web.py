"""What a new user trips over in the web reader (issue 15): an empty Today that
explains itself, words instead of figures."""

from __future__ import annotations

from datetime import timedelta

import httpx

from test_web_support import Spec, add_items, add_source, open_archive, serve_web
from tidings.settings import Settings


def test_an_empty_today_says_why_and_links_to_the_history(settings: Settings) -> None:
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha")
    server = serve_web(tid, settings)
    try:
        empty = httpx.get(server.url + "/").text
    finally:
        server.stop()
    assert "No items yet" in empty and 'href="/add"' in empty
    ids = add_items(tid, [Spec("Old story", age=timedelta(days=30), backfill=True),
                          Spec("Older story", age=timedelta(days=60), backfill=True)])
    server = serve_web(tid, settings)  # a fresh reader: no figures cached
    try:
        page = httpx.get(server.url + "/").text
    finally:
        server.stop()
        tid.close()
    page = " ".join(page.split())
    assert "Nothing new in the last 24 hours" in page, page[page.find("empty"):][:900]
    assert "first collection" in page and "2 items" in page, page[page.find("today-empty"):][:900]
    assert 'id="today-all" href="/all"' in page or 'href="/all" id="today-all"' in page
    assert f'href="/item/{ids[0]}" id="today-newest">Old story</a>' in page
    assert "1 month ago" in page
