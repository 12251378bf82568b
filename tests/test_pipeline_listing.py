"""Listing memory: entries listed unchanged skip cleaning, never a decision.

The property that matters: for any stored state, planning a listing with the
memory gives exactly the batch and the actions of planning it without.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiohttp import web

from netservers import serve
from tidings.app import Tidings
from tidings.identity.decide import MAX_REVISIONS, Action
from tidings.model import BodyState, IdentityMode, ItemData, RunOutcome, Source, SourceKind
from tidings.pipeline import listing
from tidings.pipeline import upsert as upsert_module
from tidings.pipeline.upsert import (
    listing_memory,
    plan_prepared,
    prepare,
)
from tidings.settings import Settings, load_settings
from tidings.store import open_storage
from tidings.store.base import Storage
from units import apply_prepared, upsert_item, upsert_items

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
LATER = NOW + timedelta(hours=1)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Storage]:
    s = open_storage(load_settings(tmp_path, env={}))
    for sid in ("owner", "mirror"):
        s.add_source(Source(id=sid, kind=SourceKind("rss"), url=f"https://{sid}.example/feed",
                            created_at=NOW))
    yield s
    s.close()


def entry(n: int, **kw: object) -> ItemData:
    base: dict[str, object] = {
        "title": f"Story {n}", "url": f"https://news.example/s/{n}?utm_source=rss",
        "guid": f"g{n}", "summary": "short", "body": f"<p>Body of <b>story</b> {n}</p>",
        "body_state": BodyState.OK, "published_at": NOW - timedelta(hours=2),
    }
    base.update(kw)
    return ItemData(**base)  # type: ignore[arg-type]


LISTING = [entry(n) for n in range(1, 6)]


def memory_after(store: Storage, items: list[ItemData], sid: str = "owner") -> dict[str, str]:
    """Store ``items`` as a run of ``sid`` does and return the memory it leaves."""
    source = store.get_source(sid)
    prepared = prepare(source, items, NOW, listed={})
    apply_prepared(store, source, prepared, NOW)
    return listing_memory(prepared)


def assert_same_plan(store: Storage, items: list[ItemData], memory: dict[str, str],
                     sid: str = "owner") -> list[Action]:
    source = store.get_source(sid)
    fast = prepare(source, items, LATER, listed=memory)
    full = prepare(source, items, LATER)
    batch_fast, out_fast = plan_prepared(store, source, fast, LATER)
    batch_full, out_full = plan_prepared(store, source, full, LATER)
    assert batch_fast == batch_full
    assert out_fast.actions == out_full.actions
    assert (out_fast.created, out_fast.revised, out_fast.rediscovered, out_fast.unchanged,
            out_fast.skipped) == (out_full.created, out_full.revised, out_full.rediscovered,
                                  out_full.unchanged, out_full.skipped)
    return list(out_full.actions.values())


def test_an_unchanged_listing_is_keyed_but_not_cleaned(store: Storage) -> None:
    memory = memory_after(store, LISTING)
    assert len(memory) == len(LISTING)
    again = prepare(store.get_source("owner"), [*LISTING, entry(9)], LATER, listed=memory)
    assert [p.fields is None for p in again] == [True] * len(LISTING) + [False]
    assert assert_same_plan(store, [*LISTING, entry(9)], memory) == \
        [Action.UNCHANGED] * len(LISTING) + [Action.CREATE]


def test_a_changed_entry_is_cleaned_and_revises(store: Storage) -> None:
    memory = memory_after(store, LISTING)
    changed = [*LISTING[:2], entry(3, body="<p>Corrected</p>"), *LISTING[3:]]
    fast = prepare(store.get_source("owner"), changed, LATER, listed=memory)
    assert [p.fields is None for p in fast] == [True, True, False, True, True]
    assert assert_same_plan(store, changed, memory)[2] is Action.REVISE


Mutation = Callable[[Storage], None]


def _tombstone(store: Storage) -> None:
    item = store.get_item_by_key("https://news.example/s/2")
    store.delete_item(item.id, NOW)


def _revised_since(store: Storage) -> None:
    upsert_item(store, store.get_source("owner"), entry(3, body="<p>Newer text</p>"), NOW)


def _revised_back(store: Storage) -> None:
    _revised_since(store)
    upsert_item(store, store.get_source("owner"), entry(3, body="<p>Third text</p>"), NOW)


def _pending_again(store: Storage) -> None:
    upsert_item(store, store.get_source("owner"), entry(4, body=None), NOW)


@pytest.mark.parametrize("mutate", [
    lambda store: None, _tombstone, _revised_since, _revised_back, _pending_again,
], ids=["untouched", "tombstoned", "revised-since", "revised-twice", "teaser-since"])
def test_decisions_match_the_full_path_whatever_changed_in_between(
    store: Storage, mutate: Mutation,
) -> None:
    memory = memory_after(store, LISTING)
    mutate(store)
    assert_same_plan(store, LISTING, memory)


def test_content_past_the_revision_cap_stays_capped(store: Storage) -> None:
    owner = store.get_source("owner")
    for n in range(MAX_REVISIONS + 1):
        upsert_item(store, owner, entry(1, body=f"<p>Counter {n}</p>"), NOW)
    memory = memory_after(store, [entry(1, body="<p>Counter past the cap</p>")])
    assert assert_same_plan(store, [entry(1, body="<p>Counter past the cap</p>")],
                            memory) == [Action.CAPPED]


def test_another_owner_gets_a_discovery_either_way(store: Storage) -> None:
    upsert_items(store, store.get_source("mirror"), LISTING[:2], NOW)
    memory = memory_after(store, LISTING)
    actions = assert_same_plan(store, LISTING, memory)
    assert actions[:2] == [Action.REDISCOVER] * 2


def test_memory_from_elsewhere_falls_back_to_creating(tmp_path: Path, store: Storage) -> None:
    memory = memory_after(store, LISTING)
    other = open_storage(load_settings(tmp_path / "other", env={}))
    other.add_source(Source(id="owner", kind=SourceKind("rss"), url="https://owner.example/feed",
                            created_at=NOW))
    try:
        assert assert_same_plan(other, LISTING, memory) == [Action.CREATE] * len(LISTING)
    finally:
        other.close()


def test_imported_history_still_records_its_baseline(store: Storage) -> None:
    source = store.get_source("owner")
    prepared = prepare(source, LISTING, NOW, listed={})
    apply_prepared(store, source, prepared, NOW, imported=True)
    actions = assert_same_plan(store, LISTING, listing_memory(prepared))
    assert actions == [Action.BASELINE] * len(LISTING)


def test_replacement_characters_compare_lossily_either_way(store: Storage) -> None:
    lossy = [entry(1, body="<p>caf\ufffd au lait</p>")]
    memory = memory_after(store, [entry(1, body="<p>café au lait</p>")])
    memory |= memory_after(store, lossy)
    assert assert_same_plan(store, [entry(1, body="<p>caf\u00e9 au lait</p>")], memory) == \
        [Action.UNCHANGED]


def test_a_replacement_character_made_by_cleaning_is_compared_lossily(store: Storage) -> None:
    upsert_item(store, store.get_source("owner"), entry(1, body="<p>café au lait</p>"), NOW)
    memory = memory_after(store, [entry(1, body="<p>caf&#65533; au lait</p>")])
    actions = assert_same_plan(store, [entry(1, body="<p>caf&#65533; au lait</p>")], memory)
    assert actions == [Action.UNCHANGED]


def test_teasers_are_not_remembered(store: Storage) -> None:
    memory = memory_after(store, [entry(1, body=None), entry(2)])
    assert len(memory) == 1
    assert [p.fields is None for p in prepare(
        store.get_source("owner"), [entry(1, body=None), entry(2)], LATER, listed=memory)] == \
        [False, True]


@pytest.mark.parametrize("change", [
    {"identity_mode": IdentityMode.URL}, {"tracking": ("ref",)}, {"local_media": True},
], ids=["identity-mode", "tracking-params", "local-media"])
def test_marks_depend_on_how_entries_are_cleaned(store: Storage, change: dict[str, object]
                                                 ) -> None:
    source = store.get_source("owner")
    memory = memory_after(store, LISTING)
    mode = change.get("identity_mode", source.identity_mode)
    tracking = change.get("tracking", ())
    again = prepare(replace(source, identity_mode=mode), LISTING, LATER,  # type: ignore[arg-type]
                    tracking, bool(change.get("local_media")), memory)  # type: ignore[arg-type]
    assert all(p.fields is not None for p in again)


_OTHER_VALUES: dict[str, object] = {
    "title": "Other", "url": "https://news.example/other", "guid": "g-other",
    "key": "x:123", "summary": "longer", "body": None, "body_state": BodyState.UNCONFIRMED,
    "published_at": NOW, "published_raw": "Mon, 30 Nov 2026", "updated_at": NOW,
    "author": "A. Writer", "categories": ("news",), "images": ("https://i/1",),
    "raw": {"enclosure": "x"}, "backfill": True,
}


@pytest.mark.parametrize("name", [f.name for f in fields(ItemData)])
def test_every_field_of_an_entry_is_in_its_mark(name: str) -> None:
    """A field added to ItemData without a value here fails, as it must be hashed."""
    prefix = listing.seed(IdentityMode.GUID, (), False)
    base = entry(1)
    changed = replace(base, **{name: _OTHER_VALUES[name]})
    assert listing.mark(prefix, changed) != listing.mark(prefix, base)


def test_marks_tell_empty_from_missing_and_keep_field_boundaries() -> None:
    prefix = listing.seed(IdentityMode.GUID, (), False)
    assert listing.mark(prefix, entry(1, body="")) != listing.mark(prefix, entry(1, body=None))
    assert listing.mark(prefix, entry(1, title="ab", summary="c")) != \
        listing.mark(prefix, entry(1, title="a", summary="bc"))


def test_malformed_memory_is_ignored() -> None:
    assert listing.remembered({"listed": ["not", "a", "map"]}) == {}
    assert listing.remembered({"listed": {"a": 1, "b": "c"}}) == {"b": "c"}
    assert listing.remembered({}) == {}


def test_deferred_entries_cross_a_process_boundary(store: Storage) -> None:
    memory = memory_after(store, LISTING)
    again = prepare(store.get_source("owner"), LISTING, LATER, listed=memory)
    assert pickle.loads(pickle.dumps(again)) == again


# ------------------------------------------------------------------ collection

def _feed(items: list[tuple[str, str]]) -> bytes:
    entries = "".join(
        f"<item><guid>{guid}</guid><title>{guid}</title><link>http://x.example/{guid}</link>"
        f"<description>{body}</description></item>" for guid, body in items)
    return (f"<?xml version='1.0'?><rss version='2.0'><channel><title>F</title>{entries}"
            "</channel></rss>").encode()


async def test_rounds_keep_the_memory_across_304s_and_use_it(
    settings: Settings, monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = {"items": [(f"g{n}", f"Body {n}") for n in range(5)], "etag": '"v1"'}

    async def feed(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == state["etag"]:
            return web.Response(status=304)
        return web.Response(body=_feed(state["items"]),  # type: ignore[arg-type]
                            headers={"ETag": str(state["etag"]),
                                     "Content-Type": "application/rss+xml"})

    cleaned: list[str] = []
    real = upsert_module._item_fields

    def counting(item: ItemData, *args: object) -> object:
        cleaned.append(item.guid or "")
        return real(item, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(upsert_module, "_item_fields", counting)
    app = web.Application()
    app.add_routes([web.get("/feed", feed)])
    t = Tidings.open(settings, create=True)
    async with serve(app) as base:
        await t.sources.create(f"{base}/feed", source_id="f")
        first = await t.collection.round(["f"], extract=False)
        assert first.created == 5 and len(cleaned) == 5
        second = await t.collection.round(["f"], extract=False)  # 304: nothing parsed, memory kept
        assert second.count(RunOutcome.NOT_MODIFIED) == 1
        assert len(t.sources.get("f").cursor["listed"]) == 5
        state["items"] = [("g9", "Body 9"), *state["items"]]  # type: ignore[list-item]
        state["etag"] = '"v2"'
        cleaned.clear()
        third = await t.collection.round(["f"], extract=False)
    assert third.created == 1 and cleaned == ["g9"]
    assert len(t.sources.get("f").cursor["listed"]) == 6
    await t.aclose()
