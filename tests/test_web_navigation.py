"""Navigation by folder and source over HTTP (issue 32): ``/api/v1/counts``, mark a
source or folder read and undo it through the API, what visitors see, the errors
people get, the undo's time limit, and the sources page's "Paid APIs" section only
when there is something to show. The browser half is tests/test_browser_nav.py."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from test_web_support import (
    Clock,
    ServerThread,
    Spec,
    add_items,
    add_source,
    new_token,
    open_archive,
    run,
    serve_web,
    store_password,
    write,
)
from tidings.app import SourceUpdate, Tidings
from tidings.errors import NotFoundError
from tidings.model import PaidCall, Visibility
from tidings.settings import Settings


@dataclass
class Api:
    tid: Tidings
    server: ServerThread
    client: httpx.Client
    items: dict[str, list[int]]


@pytest.fixture
def api(settings: Settings) -> Iterator[Api]:
    tid = open_archive(settings)
    add_source(tid, "wire", "The Wire")
    add_source(tid, "lab", "Lab Notes")
    add_source(tid, "pushed", "Pushed", visibility=Visibility.ISOLATED)
    write(tid, lambda unit: unit.add_folder("News"))
    write(tid, lambda unit: unit.update_source("wire", SourceUpdate(folder="News")))
    items = {sid: add_items(tid, [Spec(f"{sid} {n}", source_id=sid, age=timedelta(hours=n * 10))
                                  for n in range(4)]) for sid in ("wire", "lab", "pushed")}
    token = new_token(tid, "nav")
    server = serve_web(tid, settings)
    with httpx.Client(base_url=server.url + "/api/v1",
                      headers={"Authorization": f"Bearer {token}"}) as client:
        yield Api(tid, server, client, items)
    server.stop()
    tid.close()


def _unread(api: Api) -> dict[str, int]:
    counts = api.client.get("/counts").json()
    found = {s["id"]: s["unread"] for f in counts["folders"] for s in f["sources"]}
    return {**found, **{s["id"]: s["unread"] for s in counts["sources"]}}


def test_counts_and_mark_a_folder_read_through_the_api(api: Api) -> None:
    run(lambda: api.tid.items.mark_read([api.items["wire"][3]], True))
    counts = api.client.get("/counts").json()
    assert counts["folders"] == [{"name": "News", "unread": 3, "sources": [
        {"id": "wire", "title": "The Wire", "unread": 3, "today": 3, "starred": 0}]}]
    assert [s["id"] for s in counts["sources"]] == ["lab", "pushed"]  # the admin's view
    assert (counts["all"], counts["today"], counts["starred"]) == (11, 9, 0)
    marked = api.client.post("/mark-read", json={"folder": "News"})
    assert marked.status_code == 200, marked.text
    assert marked.json()["marked"] == 3 and marked.json()["label"] == "News"
    assert _unread(api) == {"wire": 0, "lab": 4, "pushed": 4}
    lab = api.client.post("/mark-read", json={"source": "lab"}).json()
    assert lab["marked"] == 4 and _unread(api)["lab"] == 0
    undone = api.client.post("/mark-read/undo", json={"undo": marked.json()["undo"]})
    assert undone.json() == {"restored": 3}
    assert _unread(api) == {"wire": 3, "lab": 0, "pushed": 4}
    assert api.tid.items.get(api.items["wire"][3]).read, "read before the mark: stays read"
    again = api.client.post("/mark-read/undo", json={"undo": marked.json()["undo"]})
    assert again.status_code == 404 and "nothing to undo" in again.json()["detail"]


def test_bad_marks_get_one_line_errors(api: Api) -> None:
    for body, status in [({}, 422), ({"source": "lab", "folder": "News"}, 422),
                         ({"source": "nope"}, 404), ({"folder": "Nope"}, 404),
                         ({"source": "x" * 500}, 422)]:
        answer = api.client.post("/mark-read", json=body)
        assert answer.status_code == status, (body, answer.text)
        assert "detail" in answer.json()
    assert _unread(api) == {"wire": 4, "lab": 4, "pushed": 4}
    # the browser's session needs the page's CSRF token, as every other API write
    bare = httpx.post(api.server.url + "/api/v1/mark-read", json={"source": "lab"})
    assert bare.status_code == 403 and "csrf" in bare.json()["detail"].lower()
    form = httpx.post(api.server.url + "/nav/mark-read", data={"source": "lab"})
    assert form.status_code == 403
    assert httpx.get(api.server.url + "/folder/Nope").status_code == 404


def test_visitors_count_only_editorial_sources(api: Api) -> None:
    store_password(api.tid, "a long enough password")
    api.server.app.app.state.web.settings = replace(  # type: ignore[attr-defined]
        api.server.app.app.state.web.settings, public_reading=True)  # type: ignore[attr-defined]
    api.server.app.app.state.web.password_changed()  # type: ignore[attr-defined]
    visitor = httpx.get(api.server.url + "/api/v1/counts").json()
    assert [s["id"] for s in visitor["sources"]] == ["lab"]
    assert visitor["all"] == 8
    page = httpx.get(api.server.url + "/all").text
    assert 'data-source="lab"' in page and 'data-source="pushed"' not in page
    assert "mark-scope" not in httpx.get(api.server.url + "/source/lab").text
    assert api.client.get("/counts").json()["all"] == 12  # the token is the admin's


def test_a_private_reader_tells_visitors_no_folder_names(api: Api) -> None:
    store_password(api.tid, "a long enough password")
    api.server.app.app.state.web.password_changed()  # type: ignore[attr-defined]
    for path in ("/folder/News", "/folder/Nope"):
        answer = httpx.get(api.server.url + path)
        assert answer.status_code == 303 and "/login" in answer.headers["location"], path
    assert httpx.get(api.server.url + "/api/v1/counts").status_code == 401


def test_an_undo_lasts_thirty_minutes(settings: Settings) -> None:
    clock = Clock()
    tid = Tidings.open(settings, create=True, clock=clock)
    try:
        add_source(tid, "lab", "Lab Notes")
        add_items(tid, [Spec("one", source_id="lab"), Spec("two", source_id="lab")])
        lab = [tid.sources.get("lab")]
        first = run(lambda: tid.navigation.mark_read(lab, "Lab Notes"))
        assert len(first.item_ids) == 2 and tid.navigation.marked(first.token) == first
        clock.advance(minutes=31)
        assert tid.navigation.marked(first.token) is None
        with pytest.raises(NotFoundError, match="30 minutes"):
            run(lambda: tid.navigation.undo(first.token))
        run(lambda: tid.items.mark_read(list(first.item_ids), False))
        second = run(lambda: tid.navigation.mark_read(lab, "Lab Notes"))
        clock.advance(minutes=29)
        assert run(lambda: tid.navigation.undo(second.token)) == 2
    finally:
        tid.close()


def test_the_paid_apis_section_shows_only_with_calls(api: Api) -> None:
    page = httpx.get(api.server.url + "/sources").text
    assert "Paid APIs" not in page
    call = PaidCall("socialdata", "search", ("wire",), "ok", 0.0002, 120, datetime.now(UTC))
    write(api.tid, lambda unit: unit.record_paid_call(call))
    page = httpx.get(api.server.url + "/sources").text
    assert "Paid APIs" in page and "socialdata: 1 call" in page


def test_the_sidebar_marks_the_page_it_is_on(api: Api) -> None:
    """The sidebar is rendered once for many pages; each page still marks itself (and
    only itself) current in it."""
    import re

    with httpx.Client(base_url=api.server.url) as pages:
        for path, marked in (("/", 'data-view="today"'), ("/all", 'data-view="all"'),
                             ("/folder/News", 'data-folder-link="News"'),
                             ("/source/lab", 'data-source="lab"'),
                             ("/source/wire", 'data-source="wire"')):
            html = pages.get(path).text
            side = re.search(r'<aside class="sidebar".*?</aside>', html, re.S)
            assert side is not None, path
            current = re.findall(r'<a [^>]*aria-current="page"[^>]*>', side.group(0))
            assert len(current) == 1 and marked in current[0], (path, current)
