"""A kind from another package: one module plus its entry point, nothing else (issue 28).

``tests/toykind.py`` is installed the way a package is (a ``.dist-info`` with an
entry point of ``tidings.kinds`` on the import path), then added, collected and
scheduled through the product's own paths: its cost class and first interval come
from its record, its batch reader reads a whole shelf with one request.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from aiohttp import web

import tidings.readers as readers
from netservers import serve
from test_web_support import open_archive, serve_web
from tidings.app import ItemQuery, Tidings, kinds
from tidings.errors import ConfigError
from tidings.model import CostClass, IdentityMode, RunOutcome, SourceKind
from tidings.settings import Settings

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TESTS = Path(__file__).resolve().parent


def install(site: Path, name: str, entry_points: str) -> None:
    dist = site / f"{name}-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[tidings.kinds]\n{entry_points}\n")


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """toykind installed as a package would be: its metadata and one entry point; beside
    it two broken packages (a module that is not there, an object that is not a Kind)."""
    install(tmp_path / "site", "toykind", "toy = toykind:KIND")
    install(tmp_path / "site", "brokenkinds",
            "gone = no_such_module:KIND\nwrong = toykind:TOY")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setattr(readers, "_KINDS", dict(readers._KINDS))
    monkeypatch.setattr(readers, "_INSTANCES", {})
    readers.load_entry_points.cache_clear()
    yield
    readers.load_entry_points.cache_clear()


@dataclass
class Shelf:
    requests: list[str] = field(default_factory=list)

    def app(self) -> web.Application:
        async def shelf(request: web.Request) -> web.Response:
            self.requests.append(request.path)
            name = request.match_info["name"]
            return web.json_response({
                person: [{"id": n, "title": f"{person} on {name} {n}",
                          "url": f"https://{name}.example/{person}/{n}"} for n in range(3)]
                for person in ("ann", "bob")})

        app = web.Application()
        app.router.add_get("/shelf/{name}", shelf)
        return app


@pytest.fixture
async def world(installed: None, settings: Settings) -> AsyncIterator[tuple[Tidings, Shelf, str]]:
    shelf = Shelf()
    async with serve(shelf.app()) as base:
        t = Tidings.open(settings, create=True, clock=lambda: NOW)
        yield t, shelf, base
        await t.aclose()


def test_the_kind_comes_from_its_entry_point(installed: None,
                                             caplog: pytest.LogCaptureFixture) -> None:
    toy = readers.kind_of("toy")
    assert type(toy.reader).__name__ == "type" and toy.reader.__module__ == "toykind"
    assert "toy" in kinds.kind_names(fetched_only=True)
    assert "toy" in readers.registered_kinds()
    warned = sorted(r.getMessage() for r in caplog.records)
    assert len(warned) == 2 and "'gone'" in warned[0] and "ModuleNotFoundError" in warned[0]
    assert "'wrong'" in warned[1] and "not a Kind" in warned[1]


def test_without_its_package_the_kind_is_unknown() -> None:
    with pytest.raises(ConfigError, match="unknown source kind 'toy'"):
        readers.kind_of("toy")


async def test_a_toy_source_is_added_collected_and_scheduled_by_its_own_traits(
    world: tuple[Tidings, Shelf, str],
) -> None:
    t, shelf, base = world
    for sid, name, person in (("ann", "one", "ann"), ("bob", "one", "bob"),
                              ("cat", "two", "ann")):
        source = await t.sources.add(f"{base}/shelf/{name}?for={person}", kind=SourceKind("toy"),
                                    source_id=sid, config={"person": person})
        assert source.cost_class is CostClass.HOT_SIGNAL
        assert source.interval_min == 20, "the kind's first interval, not the settings'"
        assert source.identity_mode is IdentityMode.GUID
    with pytest.raises(ConfigError, match="unknown config key 'handle'"):
        await t.sources.add(f"{base}/shelf/one?for=eve", kind=SourceKind("toy"),
                           config={"handle": "x"})

    report = await t.collection.round(extract=False)

    assert sorted(shelf.requests) == ["/shelf/one", "/shelf/two"], "one request per shelf"
    assert {sid: c.outcome for sid, c in report.results.items()} == {
        "ann": RunOutcome.OK, "bob": RunOutcome.OK, "cat": RunOutcome.OK}
    titles = sorted(i.title for i in t.items.query(ItemQuery(source_id="bob", limit=10)))
    assert titles == ["bob on one 0", "bob on one 1", "bob on one 2"]
    for sid in ("ann", "bob", "cat"):
        source = t.sources.get(sid)
        assert source.cursor == {"seen": 3}
        assert source.next_fetch_at == NOW + timedelta(minutes=20)


async def test_a_person_missing_from_the_shelf_fails_alone(
    world: tuple[Tidings, Shelf, str],
) -> None:
    t, shelf, base = world
    await t.sources.add(f"{base}/shelf/one?for=ann", kind=SourceKind("toy"), source_id="ann",
                       config={"person": "ann"})
    await t.sources.add(f"{base}/shelf/one?for=dan", kind=SourceKind("toy"), source_id="dan",
                       config={"person": "dan"})
    report = await t.collection.round(extract=False)
    assert report.results["ann"].outcome is RunOutcome.OK
    assert report.results["dan"].outcome is RunOutcome.FAILED
    assert shelf.requests == ["/shelf/one"], "read together, failed apart"
    assert "nobody called 'dan'" in (t.sources.get("dan").last_error or "")


def test_the_web_add_page_offers_and_adds_the_kind(installed: None, settings: Settings) -> None:
    tid = open_archive(settings)
    server = serve_web(tid, settings)
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            page = client.get("/add").text
            assert '<option value="toy">toy</option>' in page
            csrf = re.search(r'name="csrf" value="([^"]+)"', page)
            assert csrf is not None
            added = client.post("/add", data={
                "csrf": csrf.group(1), "url": "https://shelf.example/one?for=ann",
                "kind": "toy", "title": "Ann", "config": '{"person": "ann"}'})
            assert added.status_code == 303, added.text
            shown = client.get(added.headers["location"]).text
            assert "toy · hot_signal · identity by guid" in shown
            assert "(every 20 min)" in shown, "the kind's first interval"
            assert 'id="collect-now"' in shown, "a fetched kind can be collected"
    finally:
        server.stop()
        tid.close()

