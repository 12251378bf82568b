"""upsert_items against a real SQLite archive: R-DEDUP-3 … R-DEDUP-11."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from random import Random

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tidings.identity.decide import MAX_REVISIONS, Action
from tidings.model import BodyState, IdentityMode, ItemData, Source, SourceKind
from tidings.settings import load_settings
from tidings.store import open_storage
from tidings.store.base import ItemQuery, SourceUpdate, Storage
from units import upsert_item, upsert_items

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def make_store(path: Path) -> Storage:
    store = open_storage(load_settings(path, env={}))
    for sid in ("owner", "mirror"):
        store.add_source(Source(id=sid, kind=SourceKind("rss"), url=f"https://{sid}.example/feed",
                            created_at=NOW))
    return store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Storage]:
    s = make_store(tmp_path)
    yield s
    s.close()


def entry(n: int = 1, **kw: object) -> ItemData:
    base: dict[str, object] = {
        "title": f"Story {n}", "url": f"https://news.example/s/{n}?utm_source=rss",
        "guid": f"g{n}", "summary": "short", "body": f"<p>Body of story {n}</p>",
        "body_state": BodyState.OK, "published_at": NOW - timedelta(hours=2),
    }
    base.update(kw)
    return ItemData(**base)  # type: ignore[arg-type]


def src(store: Storage, sid: str = "owner") -> Source:
    return store.get_source(sid)


def test_create_then_unchanged_then_revision(store: Storage) -> None:
    out = upsert_item(store, src(store), entry(), NOW)
    assert out.created == 1
    again = upsert_item(store, src(store), entry(), NOW + timedelta(minutes=30))
    assert again.unchanged == 1 and again.created == 0
    changed = upsert_item(store, src(store), entry(body="<p>Corrected body</p>"), NOW)
    assert changed.revised == 1
    item = store.get_item_by_key("https://news.example/s/1")
    assert "Corrected" in (item.body or "") and item.revisions == 1


def test_only_the_owner_revises_others_add_discoveries(store: Storage) -> None:
    upsert_item(store, src(store), entry(), NOW)
    out = upsert_item(store, src(store, "mirror"), entry(title="Translated story 1"), NOW)
    assert out.rediscovered == 1 and out.revised == 0
    item = store.get_item_by_key("https://news.example/s/1")
    assert item.title == "Story 1" and item.source_id == "owner"


def test_alternating_renderings_do_not_flip_flop(store: Storage) -> None:
    a, b = entry(body="<p>rendering A</p>"), entry(body="<p>rendering B</p>")
    upsert_item(store, src(store), a, NOW)
    assert upsert_item(store, src(store), b, NOW).revised == 1
    assert upsert_item(store, src(store), a, NOW).unchanged == 1
    assert upsert_item(store, src(store), b, NOW).unchanged == 1
    assert store.get_item_by_key("https://news.example/s/1").revisions == 1


def test_replacement_characters_are_lossy_equal(store: Storage) -> None:
    upsert_item(store, src(store), entry(body="<p>数据库的性能测试</p>"), NOW)
    out = upsert_item(store, src(store), entry(body="<p>数据\ufffd的性能测\ufffd</p>"), NOW)
    assert out.unchanged == 1 and out.revised == 0


def test_a_stored_lossy_item_is_compared_with_its_stored_body(store: Storage) -> None:
    """The new text is whole, so only the stored side is lossy: deciding needs the
    stored body although the entry is no teaser and holds no U+FFFD."""
    upsert_item(store, src(store), entry(body="<p>数据\ufffd的性能测\ufffd</p>"), NOW)
    out = upsert_item(store, src(store), entry(body="<p>数据库的性能测试</p>"), NOW)
    assert out.unchanged == 1 and out.revised == 0


def test_imported_history_records_a_baseline_not_a_revision(store: Storage) -> None:
    upsert_items(store, src(store), [entry(body="<p>old import</p>")], NOW, imported=True)
    out = upsert_item(store, src(store), entry(body="<p>as collected</p>"), NOW)
    assert out.revised == 0 and out.unchanged == 1
    item = store.get_item_by_key("https://news.example/s/1")
    assert item.revisions == 0
    assert upsert_item(store, src(store), entry(body="<p>as collected</p>"), NOW).unchanged == 1


def test_revisions_are_capped_for_content_that_always_changes(store: Storage) -> None:
    upsert_item(store, src(store), entry(body="<p>views: 0</p>"), NOW)
    for n in range(1, MAX_REVISIONS + 10):
        upsert_item(store, src(store), entry(body=f"<p>views: {n}</p>"), NOW)
    item = store.get_item_by_key("https://news.example/s/1")
    assert item.revisions == MAX_REVISIONS
    out = upsert_item(store, src(store), entry(title="A new headline", body="<p>x</p>"), NOW)
    assert out.revised == 1, "a visible change still counts past the cap"


def test_tombstones_keep_deleted_items_away(store: Storage) -> None:
    upsert_item(store, src(store), entry(), NOW)
    store.delete_item(store.get_item_by_key("https://news.example/s/1").id, NOW)
    out = upsert_item(store, src(store), entry(), NOW)
    assert out.actions["https://news.example/s/1"] is Action.TOMBSTONED
    assert out.created == 0


def test_future_dates_are_not_trusted_and_old_items_are_backfill(store: Storage) -> None:
    future = entry(1, published_at=NOW + timedelta(days=3), published_raw="in 3 days")
    old = entry(2, published_at=NOW - timedelta(days=10))
    upsert_items(store, src(store), [future, old], NOW)
    f = store.get_item_by_key("https://news.example/s/1")
    o = store.get_item_by_key("https://news.example/s/2")
    assert f.published_at is None and f.raw["published_raw"] == "in 3 days"
    assert not f.backfill
    assert o.backfill


def test_teaser_relisting_keeps_the_extracted_body(store: Storage) -> None:
    teaser = entry(body=None, body_state=BodyState.PENDING)
    upsert_item(store, src(store), teaser, NOW)
    upsert_item(store, src(store), entry(body="<p>The full extracted text</p>"), NOW)
    out = upsert_item(store, src(store), teaser, NOW)
    assert out.unchanged == 1
    item = store.get_item_by_key("https://news.example/s/1")
    assert "full extracted" in (item.body or "") and item.body_state is BodyState.OK


def test_bodies_are_sanitized_on_the_way_in(store: Storage) -> None:
    upsert_item(store, src(store), entry(body='<p onclick="x()">hi<script>alert(1)</script></p>'),
                NOW)
    body = store.get_item_by_key("https://news.example/s/1").body or ""
    assert "script" not in body and "onclick" not in body and "hi" in body


def test_repeated_keys_in_one_batch_first_wins(store: Storage) -> None:
    out = upsert_items(store, src(store), [entry(title="first"), entry(title="second")], NOW)
    assert out.created == 1
    assert store.get_item_by_key("https://news.example/s/1").title == "first"


def test_a_url_title_source_folds_its_copy_of_a_wire_story(store: Storage) -> None:
    """R-DEDUP-10 degrades only the entries whose URL the batch shares: a source in
    url_title mode still folds its copy of a wire story with another source's."""
    upsert_item(store, src(store), entry(7, title="Wire story 7"), NOW)
    mirror = store.update_source("mirror", SourceUpdate(identity_mode=IdentityMode.URL_TITLE))
    home = "https://mirror.example/"
    batch = [entry(7, title="Wire story 7", url="https://NEWS.example/s/7?from=mirror"),
             entry(8, title="Notice A", url=home), entry(9, title="Notice B", url=home)]
    out = upsert_items(store, mirror, batch, NOW)
    assert (out.rediscovered, out.created) == (1, 2)
    wire = store.get_item_by_key("https://news.example/s/7")
    assert wire.source_id == "owner" and wire.title == "Wire story 7"
    created = [store.get_item(i) for i in out.created_ids.values()]
    assert all(i.key.startswith("src:mirror:") for i in created)
    assert sorted(i.title for i in created) == ["Notice A", "Notice B"]
    assert {i.url for i in created} == {home}


listings = st.dictionaries(st.integers(0, 30), st.sampled_from(["<p>a</p>", "<p>b</p>", None]),
                           min_size=1, max_size=15)


@hsettings(max_examples=25, deadline=None,
           suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(owner=listings, mirror=listings, seed=st.randoms(use_true_random=False))
def test_any_order_of_a_batch_gives_the_same_archive(
    tmp_path_factory: pytest.TempPathFactory, owner: dict[int, str | None],
    mirror: dict[int, str | None], seed: Random,
) -> None:
    def entries(listing: dict[int, str | None]) -> list[ItemData]:
        return [entry(n, body=b, body_state=BodyState.OK if b else BodyState.PENDING)
                for n, b in listing.items()]

    def archive(owner_batch: list[ItemData], mirror_batch: list[ItemData]) -> set[tuple]:
        store = make_store(tmp_path_factory.mktemp("a"))
        upsert_items(store, src(store, "owner"), owner_batch, NOW)
        upsert_items(store, src(store, "mirror"), mirror_batch, NOW)
        rows = {(i.key, i.title, i.body, i.content_hash, i.source_id)
                for i in store.list_items(ItemQuery(limit=100))}
        store.close()
        return rows

    a, b = entries(owner), entries(mirror)
    a2, b2 = list(a), list(b)
    seed.shuffle(a2)
    seed.shuffle(b2)
    assert archive(a, b) == archive(a2, b2)
