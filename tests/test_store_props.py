"""Property: whatever item fields go in come back out unchanged (every backend)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage_contract import source
from tidings.model import BodyState
from tidings.store.base import ItemFields, NewItem, Storage, UpsertBatch

text = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
               max_size=40)
aware = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1),
                     timezones=st.sampled_from([UTC, timezone(timedelta(hours=8)),
                                                timezone(timedelta(hours=-5, minutes=-30))]))
json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-2**53, 2**53) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8)
item_fields = st.builds(
    ItemFields, title=text, url=st.none() | text, summary=text, body=st.none() | text,
    body_state=st.sampled_from(BodyState), published_at=st.none() | aware, author=text,
    categories=st.lists(text, max_size=3).map(tuple), images=st.lists(text, max_size=3).map(tuple),
    raw=st.dictionaries(text, json_value, max_size=4),
    content_hash=st.none() | st.text("0123456789abcdef", min_size=1, max_size=64),
    title_fp=text)
counter = itertools.count()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(f=item_fields, discovered=aware, backfill=st.booleans())
def test_item_fields_round_trip(storage: Storage, f: ItemFields, discovered: datetime,
                                backfill: bool) -> None:
    if not storage.list_sources():
        storage.add_source(source("feed"))
    key = f"key-{next(counter)}"
    created = storage.apply_upserts(UpsertBatch(creates=[
        NewItem(key=key, source_id="feed", fields=f, discovered_at=discovered,
                backfill=backfill)]))
    item = storage.get_item(created[key])
    assert (item.title, item.url, item.summary, item.body, item.body_state, item.author) == (
        f.title, f.url, f.summary, f.body, f.body_state, f.author)
    assert (item.categories, item.images, dict(item.raw)) == (f.categories, f.images, f.raw)
    assert item.published_at == f.published_at and item.discovered_at == discovered
    assert item.published_at is None or item.published_at.tzinfo is UTC
    assert (item.content_hash, item.title_fp, item.backfill) == (
        f.content_hash or "", f.title_fp, backfill)
    state = storage.lookup_items([key])[key]
    assert state.content_hash == f.content_hash and state.raw == f.raw
