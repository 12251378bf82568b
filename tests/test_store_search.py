"""Contract: full-text search (CJK and English), its syntax, highlights and index upkeep."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from storage_contract import at, fields, new, source
from tidings.errors import ConfigError
from tidings.store.base import Revision, SearchQuery, Storage, UpsertBatch
from tidings.store.query_syntax import parse_search

DOCS = {
    "zh1": ("人工智能的新进展",
            "<p>研究人员发布了新的<b>大语言</b>模型。机器学习正在改变世界。</p>"),
    "zh2": ("北京天气", "<p>今天北京晴朗，气温适中。人们在公园散步。</p>"),
    "zh3": ("猫", "<p>我家的猫喜欢睡觉</p>"),
    "en1": ("Python performance tips", "<p>Profiling comes first. Then <em>optimize</em> "
                                       "the hot loops of your program.</p>"),
    "en2": ("Gardening in spring", "<p>Plant tomatoes after the last frost; python "
                                   "snakes are not welcome.</p>"),
    "mix": ("iPhone手机评测", "<p>The new iPhone手机 has a better camera &amp; battery.</p>"),
}


def _fill(storage: Storage) -> Storage:
    storage.add_source(source("feed"))
    storage.add_source(source("other"))
    creates = [new(key, "other" if key == "en2" else "feed", minutes=n, title=title, body=body,
                   author="Ann" if key.startswith("en") else "", published_at=at(n * 60))
               for n, (key, (title, body)) in enumerate(DOCS.items())]
    storage.apply_upserts(UpsertBatch(creates=creates))
    assert storage.unindexed_count() == len(DOCS)
    assert storage.index_pending(limit=4) == 4
    assert storage.index_pending() == 2
    assert storage.index_pending() == 0 and storage.unindexed_count() == 0
    return storage


@pytest.fixture
def indexed(storage: Storage) -> Storage:
    return _fill(storage)


def keys(storage: Storage, text: str, **kw: object) -> list[str]:
    hits = storage.search(parse_search(text, **kw))  # type: ignore[arg-type]
    items = [storage.get_item(h.item.id) for h in hits]
    assert [h.item for h in hits] == [i.brief() for i in items]  # hits are list rows
    return [i.key for i in items]


@pytest.mark.parametrize(("query", "expected"), [
    ("猫", ["zh3"]),  # one character, a whole run
    ("北", ["zh2"]),  # one character starting a run
    ("界", ["zh1"]),  # one character ending a run
    ("人", ["zh2", "zh1"]),  # in several documents, newest first
    ("天气", ["zh2"]),
    ("语言", ["zh1"]),  # across an inline tag: <b>大语言</b>
    ("大语言", ["zh1"]),
    ("语言模型", ["zh1"]),
    ("机器学习正在", ["zh1"]),
    ("学正", []),  # characters present but not adjacent
    ("京北", []),
    ("python", ["en2", "en1"]),
    ("PYTHON Loops", ["en1"]),
    ('"hot loops"', ["en1"]),
    ('"loops hot"', []),
    ("optimize", ["en1"]),
    ("iphone手机", ["mix"]),
    ("手机", ["mix"]),
    ("camera battery", ["mix"]),
])
def test_matches(indexed: Storage, query: str, expected: list[str]) -> None:
    assert keys(indexed, query) == expected


def test_negation_title_author_source_and_dates(indexed: Storage) -> None:
    assert keys(indexed, "python -snakes") == ["en1"]
    assert keys(indexed, "人 -天气") == ["zh1"]
    assert keys(indexed, "intitle:python") == ["en1"]
    assert keys(indexed, "intitle:猫") == ["zh3"]
    assert keys(indexed, "intitle:人") == ["zh1"]
    assert keys(indexed, "python author:Ann") == ["en2", "en1"]
    assert keys(indexed, "python source:other") == ["en2"]
    assert keys(indexed, "source:feed -python") == ["mix", "zh3", "zh2", "zh1"]
    day = at(0).date().isoformat()
    assert keys(indexed, f"python date:{day}") == ["en2", "en1"]
    assert keys(indexed, f"python date:>{day}") == []
    assert keys(indexed, "python date:<2000-01-01") == []


def test_ranked_prefers_title_hits(indexed: Storage) -> None:
    hits = indexed.search(SearchQuery(terms=("python",), ranked=True))
    assert [indexed.get_item(h.item.id).key for h in hits] == ["en1", "en2"]
    assert hits[0].rank > hits[1].rank


def test_snippets_are_escaped_and_highlighted(indexed: Storage) -> None:
    (hit,) = indexed.search(parse_search("camera"))
    assert "<mark>camera</mark>" in hit.snippet and "&amp;" in hit.snippet
    assert "<p>" not in hit.snippet
    (hit,) = indexed.search(parse_search("语言"))
    assert "大<mark>语言</mark>模型" in hit.snippet
    (hit,) = indexed.search(parse_search('"hot loops"'))
    assert "<mark>hot loops</mark>" in hit.snippet


def test_newest_first_paging(indexed: Storage) -> None:
    first = indexed.search(SearchQuery(terms=("人",), limit=1))
    assert [indexed.get_item(h.item.id).key for h in first] == ["zh2"]
    item = first[0].item
    assert item.published_at is not None
    rest = indexed.search(SearchQuery(terms=("人",), before=(item.published_at, item.id)))
    assert [indexed.get_item(h.item.id).key for h in rest] == ["zh1"]


#: days back from the newest item: on both sides of PostgreSQL's search spans (2, 16
#: and 128 days back), some on their very edges, and one in the future
_SPREAD_DAYS = (-3, 0, 1, 2, 2.5, 15, 16, 17, 100, 128, 129, 400, 1500)


def test_newest_first_over_years_in_pages(storage: Storage) -> None:
    storage.add_source(source("feed"))
    storage.add_source(source("other"))
    newest = 3 * 365 * 24 * 60
    creates = [new(f"d{n}", "other" if n % 3 == 0 else "feed", title=f"Report {n}",
                   body="<p>tidal energy news</p>" if n % 4 else "<p>tidal news</p>",
                   published_at=at(newest - days * 24 * 60))
               for n, days in enumerate(_SPREAD_DAYS)]
    storage.apply_upserts(UpsertBatch(creates=creates))
    while storage.index_pending():
        pass
    order = [f"d{n}" for n, _ in sorted(enumerate(_SPREAD_DAYS), key=lambda p: p[1])]
    assert keys(storage, "tidal") == order
    assert keys(storage, "energy") == [k for k in order if int(k[1:]) % 4]
    other = storage.search(SearchQuery(terms=("tidal",), source_id="other"))
    assert [storage.get_item(h.item.id).key for h in other] == [
        k for k in order if int(k[1:]) % 3 == 0]
    pages: list[str] = []
    query = SearchQuery(terms=("tidal",), limit=3)
    while hits := storage.search(query):
        pages += [storage.get_item(h.item.id).key for h in hits]
        last = hits[-1].item
        assert last.published_at is not None
        query = SearchQuery(terms=("tidal",), limit=3, before=(last.published_at, last.id))
    assert pages == order


#: hours back from the newest item (2024-03-01 12:00 UTC): on both sides of the edges
#: of PostgreSQL's spans (the UTC hours from 09:00, the days from 02-29, the months
#: from 02-01), and one in the future
_SPREAD_HOURS = (-2, 0, 0.5, 2.9, 3.1, 5, 11.9, 12.1, 35.9, 36.1, 300, 707.9, 708.1, 1000,
                 10_000)


def _in_time_order_everywhere(storage: Storage, times: list[datetime], texts: tuple[str, ...],
                              page: int) -> None:
    """Items dated ``times`` are found newest first for every page size, in the ranked
    window, and paged through with ``before`` ``page`` at a time."""
    storage.add_source(source("feed"))
    storage.apply_upserts(UpsertBatch(creates=[
        new(f"h{n}", title=f"Report {n}", body="<p>tidal 潮汐</p>", published_at=when)
        for n, when in enumerate(times)]))
    while storage.index_pending():
        pass
    order = [f"h{n}" for n, _ in sorted(enumerate(times), key=lambda p: p[1], reverse=True)]
    for text in texts:
        for limit in range(1, len(order) + 2):
            assert keys(storage, text, limit=limit) == order[:limit]
        ranked = storage.search(SearchQuery(terms=(text,), ranked=True))
        assert [storage.get_item(h.item.id).key for h in ranked] == order
        pages: list[str] = []
        query = SearchQuery(terms=(text,), limit=page)
        while hits := storage.search(query):
            pages += [storage.get_item(h.item.id).key for h in hits]
            last = hits[-1].item
            assert last.published_at is not None
            query = SearchQuery(terms=(text,), limit=page, before=(last.published_at, last.id))
        assert pages == order


@pytest.mark.parametrize("future", [False, True])
def test_newest_first_across_hours_days_and_months(storage: Storage, future: bool) -> None:
    _in_time_order_everywhere(storage, [at(-hours * 60) for hours in _SPREAD_HOURS
                                        if future or hours >= 0], ("tidal", "潮汐", "潮"), 2)


def test_items_dated_years_ahead_come_first_and_leave_the_rest_in_order(
        storage: Storage) -> None:
    """A feed's typo (a date years ahead) must not hide or reorder anything: the dated-ahead
    item comes first, then the others newest first, on every page and in the ranked
    window (PostgreSQL's spans end at the newest item not in the future)."""
    now = datetime.now(UTC)
    hours = (-24 * 365 * 5, -3, 0.5, 2, 30, 900)  # negative: ahead of now
    _in_time_order_everywhere(storage, [now - timedelta(hours=h) for h in hours],
                              ("tidal", "潮汐"), 1)


def test_revision_and_deletion_update_the_index(indexed: Storage) -> None:
    item = indexed.get_item_by_key("zh3")
    indexed.apply_upserts(UpsertBatch(revisions=[
        Revision(item.id, fields(title="狗", body="<p>我家的狗喜欢跑步</p>"), at(1))]))
    assert keys(indexed, "猫") == []  # the old text is gone at once
    assert keys(indexed, "狗") == []  # the new one waits for the indexer
    assert indexed.unindexed_count() == 1
    indexed.index_pending()
    assert keys(indexed, "狗") == ["zh3"] and keys(indexed, "猫") == []
    indexed.delete_item(indexed.get_item_by_key("en1").id, at(2))
    assert keys(indexed, "python") == ["en2"]


def test_a_document_built_before_a_revision_is_not_stored(storage: Storage) -> None:
    """Indexing reads a batch, builds it away from the writer, then writes: an item
    revised in between keeps waiting, and the next batch indexes its new text."""
    storage.add_source(source("feed"))
    storage.apply_upserts(UpsertBatch(creates=[
        new("a", "feed", title="Harbour fire", body="<p>The ferry stopped</p>"),
        new("b", "feed", minutes=1, title="Council vote", body="<p>Library stays open</p>")]))
    inputs = storage.index_inputs(10)
    assert [x.title for x in inputs] == ["Harbour fire", "Council vote"]
    docs = storage.build_index(inputs)
    item = storage.get_item_by_key("a")
    storage.apply_upserts(UpsertBatch(revisions=[
        Revision(item.id, fields(title="Harbour fire out", body="<p>Ferries run again</p>"),
                 at(1))]))
    with storage.write() as unit:
        assert unit.write_index(docs) == 1  # b only: a changed since it was read
    assert storage.unindexed_count() == 1
    assert keys(storage, "library") == ["b"] and keys(storage, "ferry") == []
    with storage.write() as unit:
        assert unit.write_index(docs) == 0  # b is done, a is still the old text
    assert storage.index_pending() == 1 and storage.unindexed_count() == 0
    assert keys(storage, "ferries") == ["a"] and keys(storage, "stopped") == []


def test_queries_without_words_filter_the_timeline(indexed: Storage) -> None:
    assert keys(indexed, "source:other") == ["en2"]
    assert keys(indexed, "author:Ann -snakes") == ["en1"]
    # nothing searchable is not "everything" (issue 15): it is refused, with the reason
    for nothing in ("", "。。。", "🙂", "*", "()"):
        with pytest.raises(ConfigError, match="nothing to search for"):
            keys(indexed, nothing)


def test_full_width_and_single_characters_inside_terms(indexed: Storage) -> None:
    assert keys(indexed, "ＰＹＴＨＯＮ") == ["en2", "en1"]
    assert keys(indexed, "人 -北") == ["zh1"]
    # a lone CJK character splits a term: both parts must match, adjacency is not checked
    assert keys(indexed, "new手") == ["mix"]
    assert keys(indexed, "python猫") == []
    assert keys(indexed, "iphone手") == ["mix"]


def test_a_new_tokenizer_version_rebuilds_the_sqlite_index(tmp_path: Path) -> None:
    from tidings.store.sqlite import SqliteStorage

    path = tmp_path / "db.sqlite3"
    _fill(SqliteStorage(path)).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = 'old' WHERE name = 'search_tokenizer'")
    reopened = SqliteStorage(path)
    try:
        assert reopened.unindexed_count() == len(DOCS)
        assert keys(reopened, "猫") == []
        reopened.index_pending()
        assert keys(reopened, "猫") == ["zh3"]
    finally:
        reopened.close()


def test_thousands_of_items_of_one_second_index_in_a_few_queries(tmp_path: Path) -> None:
    """An import or a feed that dates every entry alike gives many items one sort time;
    their search rowids are the next free ones above it, found without a query (or a
    step) per item already placed."""
    from tidings.store.sqlite import SqliteStorage

    storage = SqliteStorage(tmp_path / "same.sqlite3")
    storage.add_source(source("feed"))
    same = at(0)
    storage.apply_upserts(UpsertBatch(creates=[
        new(f"k{n}", published_at=same, title=f"word{n} shared") for n in range(3000)]))
    assert storage.index_pending() == 3000
    storage.apply_upserts(UpsertBatch(creates=[
        new(f"late{n}", published_at=same, title=f"late{n} shared") for n in range(2000)]))
    statements: list[str] = []
    with storage._write() as conn:  # the store's own connection, traced for this batch
        conn.set_trace_callback(statements.append)
    try:
        assert storage.index_pending() == 2000
    finally:
        with storage._write() as conn:
            conn.set_trace_callback(None)
    lookups = [s for s in statements if "search_rowid BETWEEN" in s]
    assert 1 <= len(lookups) <= 3
    with sqlite3.connect(storage.path) as conn:
        rowids = [r[0] for r in conn.execute("SELECT search_rowid FROM items")]
    assert len(set(rowids)) == 5000 and min(rowids) == same.timestamp()
    found = storage.search(parse_search("shared", limit=5000))
    assert len(found) == 5000
    storage.close()
