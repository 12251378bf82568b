"""Contract: item upserts, lookups, timelines, user state, tombstones."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from storage_contract import T0, at, fields, new, source
from tidings.errors import ConfigError, NotFoundError
from tidings.model import BodyState, Visibility
from tidings.store.base import Discovery, ItemQuery, Revision, SourceUpdate, Storage, UpsertBatch


@pytest.fixture
def feeds(storage: Storage) -> Storage:
    storage.add_source(source("feed"))
    storage.add_source(source("other"))
    return storage


def test_create_lookup_and_versions(feeds: Storage) -> None:
    created = feeds.apply_upserts(UpsertBatch(creates=[new("k1", title="One"), new("k2")]))
    assert set(created) == {"k1", "k2"}
    state = feeds.lookup_items(["k1", "missing"])
    assert list(state) == ["k1"]
    s = state["k1"]
    assert (s.id, s.title, s.source_id, s.revisions) == (created["k1"], "One", "feed", 0)
    assert s.version_hashes == {s.content_hash}
    assert s.discovered_at == T0 and s.published_at == T0
    item = feeds.get_item(created["k1"])
    assert item.source_title == "Title of feed" and item.updated_at == T0
    assert feeds.get_item_by_key("k1") == item


def test_lookup_without_bodies_keeps_the_ones_asked_for(feeds: Storage) -> None:
    """Bodies only for the keys asked and for items flagged lossy (identity decides the
    flag, not SQL): comparing a lossy item needs its text whatever was asked."""
    feeds.apply_upserts(UpsertBatch(creates=[
        new("plain", body="<p>plain</p>"), new("teaser", body="<p>extracted</p>"),
        new("broken", body="<p>caf\ufffd</p>", lossy=True),
        new("title", title="T\ufffd", body="<p>x</p>", lossy=True), new("none", body=None)]))
    keys = ["plain", "teaser", "broken", "title", "none"]
    full = feeds.lookup_items(keys)
    lean = feeds.lookup_items(keys, bodies_for={"teaser", "missing"})
    assert {k: s.body for k, s in lean.items()} == {
        "plain": None, "teaser": "<p>extracted</p>", "broken": "<p>caf\ufffd</p>",
        "title": "<p>x</p>", "none": None}
    assert {k for k, s in lean.items() if s.lossy} == {"broken", "title"}
    assert full["plain"].body == "<p>plain</p>"
    for key in keys:  # everything else is the same state
        assert lean[key] == replace(full[key], body=lean[key].body)
    assert all(s.body is None for s in feeds.lookup_items(["plain", "none"], ()).values())


def test_revision_updates_item_and_remembers_versions(feeds: Storage) -> None:
    item_id = feeds.apply_upserts(UpsertBatch(creates=[new("k1", title="v1")]))["k1"]
    first = feeds.lookup_items(["k1"])["k1"].content_hash
    feeds.apply_upserts(UpsertBatch(revisions=[
        Revision(item_id, fields(title="v2", body=None, body_state=BodyState.PENDING,
                                 published_at=at(-30)), revised_at=at(5))]))
    item = feeds.get_item(item_id)
    assert (item.title, item.body, item.body_state, item.revisions) == (
        "v2", None, BodyState.PENDING, 1)
    assert item.updated_at == at(5) and item.published_at == at(-30)
    assert item.discovered_at == T0
    state = feeds.lookup_items(["k1"])["k1"]
    assert state.version_hashes == {first, state.content_hash}


def test_baseline_hash_is_not_a_revision(feeds: Storage) -> None:
    item_id = feeds.apply_upserts(UpsertBatch(creates=[new("k1", content_hash=None)]))["k1"]
    assert feeds.lookup_items(["k1"])["k1"].content_hash is None
    assert feeds.get_item(item_id).content_hash == ""
    feeds.apply_upserts(UpsertBatch(revisions=[
        Revision(item_id, fields(content_hash="base"), at(1), counts_as_revision=False)]))
    state = feeds.lookup_items(["k1"])["k1"]
    assert (state.revisions, state.content_hash) == (0, "base")
    assert state.version_hashes == frozenset({"base"})


def test_discoveries_by_id_and_by_key_in_the_same_batch(feeds: Storage) -> None:
    item_id = feeds.apply_upserts(UpsertBatch(creates=[new("k1")]))["k1"]
    created = feeds.apply_upserts(UpsertBatch(
        creates=[new("k2")],
        discoveries=[Discovery("other", at(1), item_id=item_id),
                     Discovery("other", at(2), item_id=item_id),
                     Discovery("other", at(1), key="k2")]))
    assert list(created) == ["k2"]
    before = feeds.get_item(item_id)
    assert before.source_id == "feed" and before.revisions == 0
    with pytest.raises(NotFoundError):
        feeds.apply_upserts(UpsertBatch(discoveries=[Discovery("other", at(1), key="nope")]))
    with pytest.raises(NotFoundError):
        feeds.apply_upserts(UpsertBatch(discoveries=[Discovery("other", at(1), item_id=999)]))
    with pytest.raises(ConfigError):
        feeds.apply_upserts(UpsertBatch(discoveries=[Discovery("other", at(1))]))


def test_a_create_that_lost_the_race_becomes_a_discovery(feeds: Storage) -> None:
    first = feeds.apply_upserts(UpsertBatch(creates=[new("k1", title="first")]))
    again = feeds.apply_upserts(UpsertBatch(creates=[new("k1", "other", title="second")]))
    assert again == {}
    item = feeds.get_item(first["k1"])
    assert (item.title, item.source_id) == ("first", "feed")


def test_batch_is_atomic(feeds: Storage) -> None:
    with pytest.raises(NotFoundError):
        feeds.apply_upserts(UpsertBatch(
            creates=[new("k1"), new("k2")], revisions=[Revision(12345, fields(), at(1))]))
    assert feeds.lookup_items(["k1", "k2"]) == {}
    with pytest.raises(ConfigError):
        feeds.apply_upserts(UpsertBatch(creates=[new("k3"), new("k3")]))
    with pytest.raises(ConfigError):
        feeds.apply_upserts(UpsertBatch(creates=[new("k4", published_at=datetime(2024, 1, 1))]))
    assert feeds.lookup_items(["k3", "k4"]) == {}
    assert feeds.archive_stats().items == 0


def test_times_are_utc_on_the_way_out(feeds: Storage) -> None:
    plus8 = timezone(timedelta(hours=8))
    local = datetime(2024, 3, 1, 20, 0, 0, 123456, tzinfo=plus8)
    item_id = feeds.apply_upserts(UpsertBatch(creates=[new("k1", published_at=local)]))["k1"]
    got = feeds.get_item(item_id).published_at
    assert got == local and got is not None and got.utcoffset() == timedelta(0)
    assert got.microsecond == 123456 and got.hour == 12


def test_delete_leaves_a_tombstone(feeds: Storage) -> None:
    ids = feeds.apply_upserts(UpsertBatch(creates=[new("k1"), new("k2")]))
    feeds.delete_item(ids["k1"], at(9))
    assert feeds.tombstoned(["k1", "k2", "k3"]) == {"k1"}
    with pytest.raises(NotFoundError):
        feeds.get_item(ids["k1"])
    with pytest.raises(NotFoundError):
        feeds.delete_item(ids["k1"], at(9))
    assert feeds.apply_upserts(UpsertBatch(creates=[new("k1")])) == {}
    assert feeds.lookup_items(["k1"]) == {}


def test_lookup_listing_is_lookup_items_and_tombstoned_at_once(feeds: Storage) -> None:
    ids = feeds.apply_upserts(UpsertBatch(creates=[
        new("k1", body="<p>one</p>"), new("k2", body="<p>two</p>"), new("k3")]))
    feeds.delete_item(ids["k3"], at(9))
    keys = ["k1", "k2", "k3", "new", "k1"]
    for bodies in (None, {"k2"}, ()):
        states, dead = feeds.lookup_listing(keys, bodies_for=bodies)
        assert states == feeds.lookup_items(keys, bodies_for=bodies)
        assert dead == feeds.tombstoned(keys) == {"k3"}
    assert feeds.lookup_listing(["new", "k3"]) == ({}, {"k3"})
    assert feeds.lookup_listing(["new", "other"]) == ({}, set())
    assert feeds.lookup_listing([]) == ({}, set())
    with feeds.write() as unit:
        states, dead = unit.lookup_listing(keys, bodies_for=())
    assert set(states) == {"k1", "k2"} and states["k2"].body is None and dead == {"k3"}


def test_missing_items_raise_not_found(feeds: Storage) -> None:
    with pytest.raises(NotFoundError):
        feeds.get_item(1)
    with pytest.raises(NotFoundError):
        feeds.get_item_by_key("nope")


def test_known_urls_and_fingerprint_groups(feeds: Storage) -> None:
    ids = feeds.apply_upserts(UpsertBatch(creates=[
        new("k1", url="https://a/1", title_fp="fp1", minutes=5, published_at=None),
        new("k2", url="https://a/2", title_fp="fp1", minutes=1, published_at=None),
        new("k3", url=None, title_fp=""), new("k4", title_fp="fp2")]))
    assert feeds.known_urls(["https://a/1", "https://a/9"]) == {"https://a/1"}
    groups = feeds.fingerprint_groups(["fp1", "fp2", "fp9", ""])
    assert list(groups) == ["fp1"]  # fp2 is one item's only: nothing to fold
    assert groups["fp1"] == [feeds.get_item(ids[k]).brief() for k in ("k2", "k1")]


def test_fingerprint_groups_follow_every_write_at_once(feeds: Storage) -> None:
    ids = feeds.apply_upserts(UpsertBatch(creates=[
        new("k1", title="Story", title_fp="aa11", minutes=1),
        new("k2", source_id="other", title="Story!", title_fp="aa11", minutes=2),
        new("k4", title="STORY", title_fp="AA11", minutes=2),  # matched exactly
        new("k5", source_id="other", title="Other story", title_fp="bb22")]))
    while feeds.index_pending(limit=1):
        pass
    late = feeds.apply_upserts(UpsertBatch(creates=[
        new("k3", title="Story.", title_fp="aa11", minutes=3)]))  # not indexed yet

    def keys(fp: str) -> list[str]:
        return [feeds.get_item(i.id).key
                for i in feeds.fingerprint_groups([fp, 'x"y']).get(fp, [])]

    assert (keys("aa11"), keys("AA11"), keys("bb22")) == (["k1", "k2", "k3"], [], [])
    # a retitled item leaves its old group and joins its new one at once, indexed or not
    feeds.apply_upserts(UpsertBatch(revisions=[
        Revision(ids["k1"], fields(title="Other story", title_fp="bb22"), revised_at=at(4))]))
    for _ in range(2):
        assert (keys("aa11"), keys("bb22")) == (["k2", "k3"], ["k1", "k5"])
        feeds.index_pending()
    feeds.apply_upserts(UpsertBatch(revisions=[
        Revision(late["k3"], fields(title="Third", title_fp="cc33"), revised_at=at(4))]))
    assert (keys("aa11"), keys("cc33")) == ([], [])
    feeds.delete_item(ids["k5"], at(9))
    assert keys("bb22") == []


def test_read_and_star(feeds: Storage) -> None:
    ids = feeds.apply_upserts(UpsertBatch(creates=[new("k1"), new("k2")]))
    assert feeds.set_read([ids["k1"], ids["k2"], 999], True) == 2
    assert feeds.set_read([ids["k1"]], True) == 0
    assert feeds.set_read([ids["k1"]], False) == 1
    assert feeds.set_starred([ids["k2"]], True) == 1
    assert not feeds.get_item(ids["k1"]).read
    assert feeds.get_item(ids["k2"]).read and feeds.get_item(ids["k2"]).starred


def test_list_items_keyset_paging_is_complete_and_ordered(feeds: Storage) -> None:
    creates = [new(f"k{n}", "feed" if n % 2 else "other", minutes=n, published_at=at(n // 3))
               for n in range(25)]
    feeds.apply_upserts(UpsertBatch(creates=creates))
    seen: list[str] = []
    before = None
    while page := feeds.list_items(ItemQuery(limit=4, before=before)):
        seen.extend(i.key for i in page)
        last = page[-1]
        assert last.published_at is not None
        before = (last.published_at, last.id)
    assert len(seen) == 25 == len(set(seen))
    items = [feeds.get_item_by_key(k) for k in seen]
    order = [(i.published_at, i.id) for i in items]
    assert order == sorted(order, reverse=True)


def test_list_items_and_briefs_filters(feeds: Storage) -> None:
    feeds.update_source("other", SourceUpdate(visibility=Visibility.ISOLATED))
    ids = feeds.apply_upserts(UpsertBatch(creates=[
        new("a", author="Ann", minutes=1, published_at=None),
        new("b", "other", minutes=2, published_at=None),
        new("c", backfill=True, published_at=at(-60 * 24 * 30)),
        new("d", minutes=4, published_at=None, body_state=BodyState.UNCONFIRMED)]))
    feeds.set_read([ids["a"]], True)
    feeds.set_starred([ids["d"]], True)

    def keys(**kw: object) -> list[str]:
        query = ItemQuery(**kw)  # type: ignore[arg-type]
        found = feeds.list_items(query)
        # list rows: the same items in the same order, the same fields without the text
        assert feeds.list_briefs(query) == [i.brief() for i in found]
        return [i.key for i in found]

    assert keys() == ["d", "b", "a", "c"]
    assert keys(source_id="other") == ["b"]
    assert keys(author="Ann") == ["a"]
    assert keys(unread_only=True) == ["d", "b", "c"]
    assert keys(starred_only=True) == ["d"]
    assert keys(include_backfill=False) == ["d", "b", "a"]
    assert keys(editorial_only=True) == ["d", "a", "c"]
    assert keys(body_state=BodyState.UNCONFIRMED) == ["d"]
    assert keys(since=at(2), until=at(4)) == ["b"]
    assert keys(limit=1) == ["d"]
