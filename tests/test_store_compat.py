"""Contract: what the compatibility APIs ask of storage (store.compat) and the
``ItemQuery`` filters they use: id lists, unread counts, read-until, saved searches,
Fever keys, WebSub subscriptions. The API tests drive these on SQLite; here they
run on every backend."""

from __future__ import annotations

import json

import pytest

from storage_contract import T0, at, new, source
from tidings.errors import ConfigError, NotFoundError
from tidings.model import Visibility
from tidings.store.base import ItemQuery, SourceUpdate, Storage, UpsertBatch
from tidings.store.compat import WebSubLease
from tidings.store.users import ApiToken


@pytest.fixture
def items(storage: Storage) -> list[int]:
    """Six items, two per source, published a minute apart in id order."""
    for sid in ("a", "b", "c"):
        storage.add_source(source(sid))
    ids = storage.apply_upserts(UpsertBatch(creates=[
        new(f"k{n}", "abc"[n // 2], minutes=n, title=f"t{n}", published_at=at(n))
        for n in range(6)]))
    return [ids[f"k{n}"] for n in range(6)]


def _refs(storage: Storage, **kw: object) -> list[int]:
    return [ref for ref, _ in storage.item_refs(ItemQuery(**kw))]  # type: ignore[arg-type]


def test_id_lists_filter_and_order(storage: Storage, items: list[int]) -> None:
    assert _refs(storage) == items[::-1]  # newest first
    assert _refs(storage, order="oldest") == items
    assert _refs(storage, order="id_desc", limit=2) == items[:-3:-1]
    assert _refs(storage, source_ids=("a", "c"), order="id") == [*items[:2], *items[4:]]
    assert _refs(storage, source_ids=()) == _refs(storage, ids=()) == []
    assert _refs(storage, ids=(items[3], items[1], 10**9), order="id") == [items[1], items[3]]
    assert _refs(storage, min_id=items[1], max_id=items[4], order="id") == items[2:4]
    assert _refs(storage, order="oldest", after=(at(2), items[2])) == items[3:]
    refs = storage.item_refs(ItemQuery(ids=(items[0],)))
    assert refs == [(items[0], at(0))]
    briefs = storage.list_briefs(ItemQuery(source_ids=("b",), order="oldest"))
    assert [b.id for b in briefs] == items[2:4]
    assert [i.id for i in storage.list_items(ItemQuery(order="id", min_id=items[4]))] == [
        items[5]]


def test_read_until_by_arrival_not_by_publish_date(storage: Storage) -> None:
    """A client's "mark all read" covers what had arrived when it looked: items that
    arrived later but are dated earlier stay unread; the item stored at the time
    itself is included."""
    storage.add_source(source("a"))
    ids = storage.apply_upserts(UpsertBatch(creates=[
        new("seen", "a", minutes=10, published_at=at(5)),
        new("at", "a", minutes=20, published_at=at(20)),
        new("late, dated early", "a", minutes=30, published_at=at(1))]))
    assert storage.set_read_where(ItemQuery(arrived_until=at(20)), True) == 2
    assert [storage.get_item(ids[k]).read for k in ("seen", "at", "late, dated early")] == [
        True, True, False]


def test_the_read_items_alone(storage: Storage, items: list[int]) -> None:
    """Google Reader's read stream (Read You syncs read state from it)."""
    storage.set_read([items[1], items[4]], True)
    assert _refs(storage, read_only=True, order="id") == [items[1], items[4]]
    assert _refs(storage, read_only=True, source_ids=("c",)) == [items[4]]


def test_unread_counts_and_read_until(storage: Storage, items: list[int]) -> None:
    storage.update_source("c", SourceUpdate(visibility=Visibility.ISOLATED))
    storage.set_read([items[0]], True)
    counts = {c.source_id: (c.count, c.newest) for c in storage.unread_counts(False)}
    assert counts == {"a": (1, at(1)), "b": (2, at(3)), "c": (2, at(5))}
    assert [c.source_id for c in storage.unread_counts(True)] == ["a", "b"]
    # "everything before minute 3 is read", whatever the query's limit
    assert storage.set_read_where(ItemQuery(until=at(3), limit=1), True) == 2
    assert storage.set_read_where(ItemQuery(until=at(3)), True) == 0  # already read
    assert _refs(storage, unread_only=True, order="id") == items[3:]
    assert storage.set_read_where(ItemQuery(source_ids=("a",)), False) == 2
    assert _refs(storage, unread_only=True, order="id") == [*items[:2], *items[3:]]


def test_saved_searches(storage: Storage) -> None:
    beta = storage.add_saved_search("beta", "tag:x", T0)
    alpha = storage.add_saved_search("Alpha", "rust -go", at(1))
    assert [s.name for s in storage.list_saved_searches()] == ["Alpha", "beta"]
    assert storage.get_saved_search(alpha.id) == alpha
    assert (alpha.query, alpha.created_at) == ("rust -go", at(1))
    with pytest.raises(ConfigError, match="exists already"):
        storage.add_saved_search("BETA", "other", at(2))  # names are unique in any case
    storage.add_saved_search("Été", "a", at(2))  # case is folded for ASCII letters only
    storage.add_saved_search("été", "b", at(2))
    assert [s.name for s in storage.list_saved_searches()] == ["Alpha", "beta", "Été", "été"]
    assert storage.delete_saved_search(beta.id)
    assert not storage.delete_saved_search(beta.id)
    with pytest.raises(NotFoundError):
        storage.get_saved_search(beta.id)
    assert storage.add_saved_search("beta", "again", at(3)).id not in (alpha.id, beta.id)


def test_fever_keys_follow_their_token(storage: Storage) -> None:
    user = storage.add_user("admin", "hash", True, T0)
    for tid in ("t1", "t2"):
        storage.add_api_token(ApiToken(tid, user.id, tid, f"digest-{tid}", T0))
    assert storage.find_token_by_fever_key("md5") is None
    storage.set_fever_key("t1", "md5")
    found = storage.find_token_by_fever_key("md5")
    assert found is not None and (found.id, found.digest) == ("t1", "digest-t1")
    storage.set_fever_key("t1", "md5-new")  # a token has one key
    assert storage.find_token_by_fever_key("md5") is None
    storage.set_fever_key("t2", "md5-new")  # a key names one token
    found = storage.find_token_by_fever_key("md5-new")
    assert found is not None and found.id == "t2"
    with pytest.raises(NotFoundError):
        storage.set_fever_key("gone", "md5")
    assert storage.delete_api_token(user.id, "t2")
    assert storage.find_token_by_fever_key("md5-new") is None  # revoked with its token


def test_websub_subscriptions(storage: Storage) -> None:
    storage.add_source(source("a"))
    storage.add_source(source("b"))
    lease = WebSubLease("b", "https://hub.example/", "https://b.example/feed", "secret",
                        "verify", "requested", T0)
    storage.put_websub(lease)
    storage.put_websub(WebSubLease("a", "https://hub.example/", "https://a.example/feed",
                                   "s", "v", "failed", T0, retry_at=at(60), error="503"))
    assert [w.source_id for w in storage.list_websub()] == ["a", "b"]
    assert storage.get_websub("b") == lease
    active = WebSubLease("b", "https://hub.example/", "https://b.example/feed", "secret",
                         "verify", "active", T0, lease_until=at(600), last_push_at=at(5))
    storage.put_websub(active)  # replaced whole
    assert storage.get_websub("b") == active
    with pytest.raises(NotFoundError):
        storage.put_websub(WebSubLease("zz", "h", "t", "s", "v", "requested", T0))
    assert storage.delete_websub("a") and not storage.delete_websub("a")
    storage.delete_source("b")
    assert storage.get_websub("b") is None and storage.list_websub() == []


def test_an_id_beyond_any_integer_is_not_found(storage: Storage) -> None:
    with pytest.raises(NotFoundError):
        storage.get_item(2**70)


def test_stream_entries_carry_the_text_as_json(storage: Storage) -> None:
    """A client API's page (Google Reader ``stream/contents``): the body, else the
    summary, quoted as JSON by the database; neither is JSON ``null``."""
    storage.add_source(source("a"))
    hard = 'quote " back \\ tab \t nul-free ctl \x01 中文 🙂 \u2028 end'
    ids = storage.apply_upserts(UpsertBatch(creates=[
        new("body", "a", minutes=0, title="B", body=f"<p>{hard}</p>", summary="s"),
        new("summary", "a", minutes=1, title="S", body=None, summary=hard),
        new("none", "a", minutes=2, title="N", body="", summary="")]))
    entries = {e.id: e for e in storage.stream_entries(ItemQuery(order="id"))}
    assert [entries[ids[k]].title for k in ("body", "summary", "none")] == ["B", "S", "N"]
    assert json.loads(entries[ids["body"]].content_json) == f"<p>{hard}</p>"
    assert json.loads(entries[ids["summary"]].content_json) == hard
    assert json.loads(entries[ids["none"]].content_json) == ""
    # which one it is: the body is HTML, the summary plain text to escape
    assert [entries[ids[k]].has_body for k in ("body", "summary", "none")] == [1, 0, 0]
    first = entries[ids["body"]]
    assert (first.source_id, first.read, first.starred) == ("a", 0, 0)
    assert [e.id for e in storage.stream_entries(ItemQuery(order="id", limit=1))] == [
        ids["body"]]
