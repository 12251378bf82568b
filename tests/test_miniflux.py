"""The Miniflux API v1 subset (issue 29 item 9): its clients' requests in their shapes
(newsboat's ``minifluxapi.cpp``; the Miniflux API documentation the mobile clients
follow), and the real newsboat through its ``miniflux`` urls-source."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from test_greader_newsboat import MISSING, _keys, _wait_for_screen, cached, env, newsboat
from test_web_support import (
    ServerThread,
    Spec,
    add_items,
    add_source,
    new_token,
    open_archive,
    run,
    serve_web,
    wait_until,
)
from tidings.app import ItemQuery, SourceUpdate, Tidings
from tidings.model import Visibility
from tidings.settings import Settings
from tidings.web.fever import number


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[Tidings, ServerThread, httpx.Client, str]]:
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha")
    add_source(tid, "beta", "Beta")
    add_source(tid, "hidden", "Hidden", visibility=Visibility.ISOLATED)
    run(lambda: tid.sources.update("alpha", SourceUpdate(folder="Tech")))
    add_items(tid, [Spec(f"Alpha {i}", source_id="alpha", age=timedelta(minutes=i))
                    for i in range(130)])
    add_items(tid, [Spec(f"Beta {i}", source_id="beta", age=timedelta(hours=3 + i),
                         body=None, summary="<b>plain</b> text") for i in range(5)])
    add_items(tid, [Spec("Hidden thing", source_id="hidden")])
    token = new_token(tid, "miniflux")
    server = serve_web(tid, settings)
    http = httpx.Client(base_url=server.url, timeout=60, headers={"X-Auth-Token": token})
    yield tid, server, http, token
    http.close()
    server.stop()
    tid.close()


def _get(http: httpx.Client, path: str, **params: Any) -> Any:
    answer = http.get(path, params=params)
    assert answer.status_code == 200, (path, answer.text)
    return answer.json()


def test_feeds_categories_and_entries_as_clients_read_them(
        served: tuple[Tidings, ServerThread, httpx.Client, str]) -> None:
    _, _, http, _ = served
    assert _get(http, "/v1/me")["username"] == "admin"
    categories = {c["title"]: c["id"] for c in _get(http, "/v1/categories")}
    assert set(categories) == {"Tech", "All"}
    feeds = {f["title"]: f for f in _get(http, "/v1/feeds")}
    assert set(feeds) == {"Alpha", "Beta"}  # not the isolated source
    assert feeds["Alpha"]["category"]["id"] == categories["Tech"]
    assert feeds["Beta"]["category"]["title"] == "All"
    unread = _get(http, "/v1/entries", status="unread", limit=50, direction="desc")
    assert unread["total"] == 135 and len(unread["entries"]) == 50
    seen = []
    for offset in range(0, 200, 50):  # offset paging, as the mobile clients page
        page = _get(http, "/v1/entries", status="unread", limit=50, offset=offset,
                    order="id", direction="asc")["entries"]
        seen += [e["id"] for e in page]
    assert seen == sorted(seen) and len(set(seen)) == 135
    after = _get(http, "/v1/entries", after_entry_id=seen[-6], order="id",
                 direction="asc")["entries"]
    assert [e["id"] for e in after] == seen[-5:]
    before = _get(http, "/v1/entries", before_entry_id=seen[2])["entries"]
    assert {e["id"] for e in before} == set(seen[:2])
    beta = _get(http, f"/v1/feeds/{feeds['Beta']['id']}/entries", limit=10)
    assert beta["total"] == 5
    entry = beta["entries"][0]
    assert entry["content"] == "&lt;b&gt;plain&lt;/b&gt; text"  # plain text, escaped
    assert entry["status"] == "unread" and entry["feed"]["title"] == "Beta"
    assert entry["published_at"].endswith("Z")
    one = _get(http, f"/v1/entries/{entry['id']}")
    assert one["id"] == entry["id"]
    tech = _get(http, f"/v1/categories/{categories['Tech']}/entries", limit=1000)
    assert tech["total"] == 130
    counters = _get(http, "/v1/feeds/counters")["unreads"]
    assert counters == {str(feeds["Alpha"]["id"]): 130, str(feeds["Beta"]["id"]): 5}


def test_status_bookmark_and_mark_all(
        served: tuple[Tidings, ServerThread, httpx.Client, str]) -> None:
    tid, _, http, _ = served
    ids = [e["id"] for e in _get(http, "/v1/entries", limit=3)["entries"]]
    answer = http.put("/v1/entries", json={"entry_ids": [*ids, 99999999], "status": "read"})
    assert answer.status_code == 204  # the unknown id is ignored
    assert all(tid.items.get(i).read for i in ids)
    assert _get(http, "/v1/entries", status="read")["total"] == 3
    assert http.put(f"/v1/entries/{ids[0]}/bookmark").status_code == 204
    assert tid.items.get(ids[0]).starred
    assert [e["id"] for e in _get(http, "/v1/entries", starred="true")["entries"]] == [ids[0]]
    assert http.put(f"/v1/entries/{ids[0]}/bookmark").status_code == 204
    assert not tid.items.get(ids[0]).starred
    assert http.put(f"/v1/feeds/{number('beta')}/mark-all-as-read").status_code == 204
    assert all(i.read for i in tid.items.query(ItemQuery(source_id="beta")))
    tech = next(c["id"] for c in _get(http, "/v1/categories") if c["title"] == "Tech")
    assert http.put(f"/v1/categories/{tech}/mark-all-as-read").status_code == 204
    assert not tid.items.query(ItemQuery(unread_only=True, editorial_only=True))
    assert not tid.items.query(ItemQuery(source_id="hidden"))[0].read


def test_refusals(served: tuple[Tidings, ServerThread, httpx.Client, str]) -> None:
    tid, server, http, token = served
    for headers in ({}, {"X-Auth-Token": "nope"}, {"Authorization": "Basic bm9wZTpub3Bl"}):
        answer = httpx.get(server.url + "/v1/me", headers=headers)
        assert answer.status_code == 401 and "error_message" in answer.json()
    assert httpx.get(server.url + "/v1/me", auth=("admin", token)).status_code == 200
    hidden = tid.items.query(ItemQuery(source_id="hidden"))[0].id
    for method, path, body, status in (
            ("GET", f"/v1/entries/{hidden}", None, 404),
            ("GET", "/v1/feeds/12345", None, 404),
            ("GET", "/v1/entries?limit=-1", None, 400),
            ("PUT", "/v1/entries", {"entry_ids": [1], "status": "maybe"}, 400),
            ("PUT", "/v1/entries", {"entry_ids": "1"}, 400),
            ("PUT", f"/v1/entries/{hidden}/bookmark", None, 404)):
        answer = http.request(method, path, json=body)
        assert answer.status_code == status, (path, answer.text)
        assert isinstance(answer.json()["detail"], str)
    assert not tid.items.get(1).read


@pytest.mark.skipif(bool(MISSING), reason="newsboat missing: apt-get install newsboat")
def test_newsboat_through_its_miniflux_source(
        served: tuple[Tidings, ServerThread, httpx.Client, str], tmp_path: Path) -> None:
    """newsboat 2.21's ``urls-source "miniflux"`` (HTTP Basic: admin and a token); it
    asks each feed's entries with no ``limit`` and never pages: 130 unread in one feed
    all arrive (Miniflux's default of 100 would leave 30 behind)."""
    tid, server, _, token = served
    run(lambda: tid.items.mark_read([tid.items.query(ItemQuery(source_id="beta"))[0].id]))
    home = tmp_path / "home"
    (home / ".newsboat").mkdir(parents=True)
    (home / "urls").write_text("")
    (home / "config").write_text(
        'urls-source "miniflux"\n'
        f'miniflux-url "{server.url}"\n'
        'miniflux-login "admin"\n'
        f'miniflux-password "{token}"\n'
        "download-retries 1\nconfirm-exit no\n")
    done = subprocess.run(newsboat(home, "-x", "reload"), env=env(home), timeout=120,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    items = cached(home)
    unread = {i.title for i in tid.items.query(ItemQuery(unread_only=True, editorial_only=True,
                                                   limit=1000))}
    assert {t for t, (_, flag) in items.items() if flag} == unread
    assert "Hidden thing" not in items


@pytest.mark.slow
@pytest.mark.skipif(bool(MISSING), reason="newsboat or tmux missing: apt-get install both")
def test_newsboat_marks_read_through_miniflux(
        served: tuple[Tidings, ServerThread, httpx.Client, str], tmp_path: Path) -> None:
    """Opening an article in newsboat marks it read in tidings (PUT /v1/entries), keys
    pressed through tmux as a person presses them."""
    tid, server, _, token = served
    home = tmp_path / "home"
    (home / ".newsboat").mkdir(parents=True)
    (home / "urls").write_text("")
    (home / "config").write_text(
        f'urls-source "miniflux"\nminiflux-url "{server.url}"\nminiflux-login "admin"\n'
        f'miniflux-password "{token}"\ndownload-retries 1\nconfirm-exit no\n'
        "show-read-feeds yes\n")
    done = subprocess.run(newsboat(home, "-x", "reload"), env=env(home), timeout=120,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    session = f"tidings-mf-{os.getpid()}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "40",
                    " ".join(newsboat(home))], env=env(home), check=True)
    try:
        _wait_for_screen(session, "Beta")
        screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session],
                                capture_output=True, text=True, check=False).stdout
        if screen.find("Alpha") < screen.find("Beta"):
            _keys(session, "Down")
        _keys(session, "Enter")
        _wait_for_screen(session, "Beta 0")
        # opening the article marks it read: newsboat (2.21) sends the mark with its next
        # request, made on the way out (waiting for it here took its whole 20 s)
        _keys(session, "Enter")
        _wait_for_screen(session, "Feed:")
        _keys(session, "q")
        _keys(session, "q")
        _keys(session, "q")
        wait_until(lambda: any(i.read for i in tid.items.query(ItemQuery(source_id="beta"))), 20)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False,
                       capture_output=True)
    read = [i.title for i in tid.items.query(ItemQuery(source_id="beta")) if i.read]
    assert len(read) == 1 and read[0].startswith("Beta")
    assert not any(i.read for i in tid.items.query(ItemQuery(source_id="alpha", limit=200)))


def test_miniflutt(served: tuple[Tidings, ServerThread, httpx.Client, str]) -> None:
    """Miniflutt (``lib/models/data.dart``, ``lib/api/miniflux.dart``): one refresh asks
    ``status=unread&limit=500&order=published_at&direction=desc`` and builds its feeds
    and categories from each entry's embedded feed; ``status=`` (empty) with
    ``starred=1`` for the starred view; ``search``; marks by PUT with a JSON body."""
    tid, _, http, _ = served
    page = _get(http, "/v1/entries", status="unread", limit="500", order="published_at",
                direction="desc")
    assert len(page["entries"]) == 135
    stamps = [e["published_at"] for e in page["entries"]]
    assert stamps == sorted(stamps, reverse=True)
    assert {(e["feed"]["title"], e["feed"]["category"]["title"])
            for e in page["entries"]} == {("Alpha", "Tech"), ("Beta", "All")}
    first = page["entries"][0]["id"]
    assert http.put(f"/v1/entries/{first}/bookmark", json={}).status_code == 204
    starred = _get(http, "/v1/entries", status="", limit="500", order="published_at",
                   direction="desc", starred="1")["entries"]
    assert [e["id"] for e in starred] == [first]
    found = _get(http, "/v1/entries", status="unread", limit="500", search="Beta")
    assert {e["title"] for e in found["entries"]} == {f"Beta {i}" for i in range(5)}
    assert http.put("/v1/entries", json={"entry_ids": [first], "status": "read"},
                    headers={"Content-Type": "application/json"}).status_code == 204
    assert tid.items.get(first).read and tid.items.get(first).starred
