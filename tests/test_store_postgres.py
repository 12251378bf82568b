"""PostgreSQL only: concurrent writers, lost connections, migrations, bad URLs.

The contract itself (what every backend does) is in the other test_store_* files,
which run against PostgreSQL too; these are the cases only a server shows.
"""

from __future__ import annotations

import multiprocessing
import random
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pgserver
from storage_contract import at, fields, new, source
from tidings.errors import StorageError
from tidings.model import PaidCall, RawResponse, RunCounts, RunOutcome
from tidings.pipeline.stories import Clusterer
from tidings.store.access import ApiToken, WebSession
from tidings.store.base import Discovery, Revision, SearchQuery, UpsertBatch
from tidings.store.compat import WebSubLease
from tidings.store.postgres import PostgresStorage
from tidings.store.postgres._schema import _SEARCH_HOURS, MIGRATIONS
from tidings.store.postgres._search import TIME_LEXEME_SQL, time_lexeme
from tidings.store.sqlite import SqliteStorage
from tidings.store.stories import StoryLink

pytestmark = pytest.mark.postgres

SOURCES = [f"s{n}" for n in range(20)]


@pytest.fixture
def url() -> str:
    return pgserver.schema_url()


@pytest.fixture
def pg(url: str) -> Iterator[PostgresStorage]:
    with PostgresStorage(url, pool_size=6) as storage:
        for sid in SOURCES:
            storage.add_source(source(sid))
        yield storage


def _batches(seed: int, n_keys: int = 60) -> list[tuple[str, list[str]]]:
    """The same wire story listed by 20 sources: each source's batch is an overlapping,
    shuffled slice of the keys."""
    rng = random.Random(seed)
    keys = [f"story-{seed}-{k}" for k in range(n_keys)]
    out = []
    for sid in SOURCES:
        picked = rng.sample(keys, rng.randint(n_keys // 3, n_keys))
        out.append((sid, picked))
    return out


def _apply(storage: PostgresStorage, sid: str, keys: list[str], minutes: int) -> None:
    storage.apply_upserts(UpsertBatch(creates=[new(k, sid, minutes=minutes, title=k)
                                               for k in keys]))


def _listers(storage: PostgresStorage) -> dict[str, set[str]]:
    """Per key: the owner plus every source with a discovery row."""
    with psycopg.connect(storage.url) as conn:
        rows = conn.execute(
            "SELECT i.key, i.source_id, d.source_id FROM items i "
            "LEFT JOIN discoveries d ON d.item_id = i.id").fetchall()
    out: dict[str, set[str]] = {}
    for key, owner, lister in rows:
        out.setdefault(key, set()).add(owner)
        if lister:
            out[key].add(lister)
    return out


def _expected(batches: list[tuple[str, list[str]]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for sid, keys in batches:
        for k in keys:
            out.setdefault(k, set()).add(sid)
    return out


def _item_count(url: str) -> tuple[int, int]:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*), count(DISTINCT key) FROM items").fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6))
def test_concurrent_threads_never_duplicate_and_are_order_independent(
        pg: PostgresStorage, seed: int) -> None:
    batches = _batches(seed)
    errors: list[BaseException] = []
    start = threading.Barrier(len(batches))

    def run(sid: str, keys: list[str], minutes: int) -> None:
        try:
            start.wait()
            _apply(pg, sid, keys, minutes)
        except BaseException as exc:  # the test reports it below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(sid, keys, n))
               for n, (sid, keys) in enumerate(batches)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    listers = _listers(pg)
    expected = _expected(batches)
    assert {k: v for k, v in listers.items() if k in expected} == expected
    total, distinct = _item_count(pg.url)
    assert total == distinct


def _process_writer(url: str, sid: str, keys: list[str], minutes: int) -> None:
    with PostgresStorage(url, pool_size=1) as storage:
        _apply(storage, sid, keys, minutes)
        # the same listing again, as a second round would: nothing new
        _apply(storage, sid, keys, minutes + 1)


def test_concurrent_processes_never_duplicate(pg: PostgresStorage) -> None:
    batches = _batches(7, n_keys=200)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_process_writer, args=(pg.url, sid, keys, n))
             for n, (sid, keys) in enumerate(batches[:8])]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert _listers(pg) == _expected(batches[:8])
    total, distinct = _item_count(pg.url)
    assert total == distinct == len(_expected(batches[:8]))


def test_migrations_run_once_even_when_opened_at_once(url: str) -> None:
    opened: list[PostgresStorage] = []
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            opened.append(PostgresStorage(url, pool_size=1))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for storage in opened:
        storage.close()
    assert not errors and len(opened) == 4
    with PostgresStorage(url, pool_size=1):  # and again: nothing to do
        pass
    with psycopg.connect(url) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM tidings_schema")]
        assert sorted(versions) == list(range(1, len(MIGRATIONS) + 1))
        conn.execute("INSERT INTO tidings_schema (version) VALUES (%s)", (len(MIGRATIONS) + 1,))
    with pytest.raises(StorageError, match="newer than this tidings"):
        PostgresStorage(url, pool_size=1)


@pytest.mark.parametrize("us", [0, -1, -3_600_000_000, -3_600_000_001, 1_709_294_399_999_999,
                                1_709_294_400_000_000, 253_402_300_799_999_999])
def test_the_hour_lexeme_is_the_same_in_sql(url: str, us: int) -> None:
    with psycopg.connect(url) as conn:
        sql = TIME_LEXEME_SQL.replace("%", "%%").format(col="%(us)s::bigint")
        row = conn.execute(f"SELECT {sql}".encode(), {"us": us}).fetchone()
    assert row == (time_lexeme(us),)


def test_documents_indexed_before_the_hour_lexemes_get_them(url: str) -> None:
    with PostgresStorage(url) as storage:
        storage.add_source(source("feed"))
        storage.apply_upserts(UpsertBatch(creates=[
            new(key, title="tidal", published_at=at(minutes))
            for key, minutes in (("older", 0), ("newest", 24 * 60))]))
        while storage.index_pending():
            pass
    with psycopg.connect(url, autocommit=True) as conn:  # as the migration finds it
        conn.execute("UPDATE item_search SET doc = ts_delete(doc, ARRAY(SELECT lexeme "
                     "FROM unnest(doc) WHERE lexeme LIKE '~%')) "
                     "WHERE sort_time = (SELECT max(sort_time) FROM item_search)")
    with PostgresStorage(url) as storage:
        first = storage.search(SearchQuery(terms=("tidal",), limit=1))
        assert [storage.get_item(h.item.id).key for h in first] == ["older"]  # the newest missed
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM tidings_schema WHERE version >= %s",
                     (MIGRATIONS.index(_SEARCH_HOURS) + 1,))
    with PostgresStorage(url) as storage:
        first = storage.search(SearchQuery(terms=("tidal",), limit=1))
        assert [storage.get_item(h.item.id).key for h in first] == ["newest"]


@pytest.mark.parametrize("bad", [
    "postgresql://postgres@127.0.0.1:1/test",  # nothing listens there
    "postgresql://postgres:pw@127.0.0.1:5432/no_such_database_here",
    "postgresql://postgres@127.0.0.1:5432/test?sslmode=bogus",
])
def test_bad_urls_are_one_line_errors(bad: str) -> None:
    pgserver.database_url()  # skips (outside CI) when there is no server at all
    with pytest.raises(StorageError) as caught:
        PostgresStorage(bad, pool_size=1)
    message = str(caught.value)
    assert message.startswith("cannot connect to postgresql://")
    assert "\n" not in message and "pw" not in message.split(": ", 1)[0]


def _kill_backends(url: str) -> None:
    """Terminate every other backend of the database and wait until each has exited
    (so its goodbye is on the client's socket, as after any real termination)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
                     "WHERE datname = current_database() AND pid != pg_backend_pid()")


def test_a_connection_dropped_mid_transaction_loses_the_unit_only(
        pg: PostgresStorage) -> None:
    _apply(pg, "s0", ["kept"], 0)
    with pytest.raises(StorageError, match="connection lost"), pg.write() as unit:
        unit.apply_upserts(UpsertBatch(creates=[new("half", "s0")]))
        _kill_backends(pg.url)
        unit.apply_upserts(UpsertBatch(creates=[new("other-half", "s0")]))
    # nothing of the unit was kept, and the pool hands out a working connection again
    assert pg.lookup_items(["kept", "half", "other-half"]).keys() == {"kept"}
    _kill_backends(pg.url)  # idle pooled connections die too: checked before use
    _apply(pg, "s0", ["after"], 1)
    assert "after" in pg.lookup_items(["after"])


def test_two_claims_at_once_take_disjoint_sources(pg: PostgresStorage) -> None:
    got: list[list[str]] = []
    start = threading.Barrier(4)

    def claim() -> None:
        start.wait()
        got.append([s.id for s in pg.claim_due_sources(at(0), 5, at(30))])

    threads = [threading.Thread(target=claim) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    claimed = [sid for batch in got for sid in batch]
    assert len(claimed) == len(set(claimed)) == 20


def test_claims_with_holders_at_once_lease_each_source_to_its_claimer(
        pg: PostgresStorage) -> None:
    got: dict[str, list[str]] = {}
    start = threading.Barrier(4)

    def claim(holder: str) -> None:
        start.wait()
        got[holder] = [s.id for s in pg.claim_due_sources(at(0), 5, at(30), holder=holder)]

    threads = [threading.Thread(target=claim, args=(f"w{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(sid for batch in got.values() for sid in batch) == sorted(SOURCES)
    assert pg.lease_holders() == ["w0", "w1", "w2", "w3"]
    for sid in got["w1"]:
        pg.start_run(sid, at(1))
    # two workers find w1 dead at once: its sources are freed once, its runs closed
    freed: list[int] = []
    start = threading.Barrier(2)

    def take_over() -> None:
        start.wait()
        freed.append(pg.take_over_leases("w1", at(2), "abandoned: w1 is gone"))

    threads = [threading.Thread(target=take_over) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(freed) == [0, 5]
    assert pg.lease_holders() == ["w0", "w2", "w3"]
    assert sorted(s.id for s in pg.claim_due_sources(at(3), 20, at(33))) == sorted(got["w1"])
    assert {pg.list_runs(sid)[0].error for sid in got["w1"]} == {"abandoned: w1 is gone"}


def _fill_archive(store: SqliteStorage, n: int) -> None:
    """Every table gets rows: items with revisions, discoveries and story placements,
    runs, raw pages, a tombstone, folders, a user with a session and a token, paid
    calls, marks, a hand-made story link."""
    store.add_source(source("feed", folder="News"))
    store.add_source(source("other"))
    store.apply_upserts(UpsertBatch(creates=[
        new(f"k{i}", minutes=i, title=f"t{i} 中文", body=f"<p>b{i} \ufffd</p>", lossy=True)
        for i in range(n)]))
    store.apply_upserts(UpsertBatch(
        revisions=[Revision(i, fields(title=f"r{i}"), at(n + i)) for i in range(1, n, 7)],
        discoveries=[Discovery("other", at(n), item_id=i) for i in range(1, n, 3)]))
    store.set_read(list(range(1, n, 2)), True)
    store.set_starred([3, 5], True)
    store.delete_item(2, at(n))
    run = store.start_run("feed", at(1))
    store.finish_run(run, at(2), RunCounts(outcome=RunOutcome.OK, found=3, created=1))
    for i in range(5):
        store.put_raw(RawResponse(url=f"https://f.example/{i}", final_url="https://f.example",
                                  status=200, headers={"a": "b"}, fetched_at=at(i),
                                  source_id="feed", item_key=f"k{i}", body=b"x" * 900 * i))
    user = store.add_user("admin", "hash", True, at(0))
    store.add_session(WebSession("s1", user.id, True, at(0), at(99), at(1), "ua", "::1"))
    store.add_api_token(ApiToken("t1", user.id, "cli", "digest", at(0)))
    store.record_paid_call(PaidCall("x", "list", ("feed",), "ok", 0.5, 120, at(3)))
    store.swap_mark("weekly-report", None, "2024-W09")
    store.claim_due_sources(at(0), 1, at(30), only=["other"], holder="host:1:2")
    store.add_saved_search("mine", "rust", at(4))
    store.set_fever_key("t1", "md5")
    store.put_websub(WebSubLease("feed", "https://hub.example/", "https://f.example/feed",
                                 "s", "v", "active", at(5), lease_until=at(600)))
    with store.write() as unit:
        assert Clusterer().step(unit, at(n), n) == n - 1
    store.add_story_link(StoryLink(1, 3, True, at(7)))
    store.index_pending(50)


def _multiply(path: Path, n: int, copies: int) -> None:
    """Copies 2 to ``copies`` of items 1..n with their versions, discoveries and story
    placements, under new ids, keys and URLs. The store's own path makes the first n
    (each kind of row, written as tidings writes it); the copies, one statement per
    table, make an archive of 100,000 items in seconds instead of minutes."""
    shifted = {"id": "id + :off", "item_id": "item_id + :off", "key": "key || :tag",
               "url": "url || :tag", "cluster_id": "cluster_id + :off",
               "matched": "matched + :off", "search_rowid": "NULL", "search_dirty": "1"}
    with sqlite3.connect(path) as conn:
        for table, key in (("items", "id"), ("versions", "item_id"),
                           ("discoveries", "item_id"), ("story_members", "item_id")):
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            exprs = ", ".join(shifted.get(c, c) for c in cols)
            for k in range(1, copies):
                conn.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {exprs} "
                             f"FROM {table} WHERE {key} <= :n",
                             {"off": k * n, "tag": f"~{k}", "n": n})


def _differences(first: Path, second: Path) -> dict[str, int]:
    """Per copied table, the rows of ``second`` that ``first`` does not hold, compared
    whole (every column but the search bookkeeping), after checking that every row of
    ``first`` is in ``second``. SQLite compares them (EXCEPT, which tells 1 from '1'
    and 1 from 1.0 as Python's == would not): 300,000 rows in a second or two."""
    from tidings.store.postgres._transfer import TABLES

    out = {}
    with sqlite3.connect(first) as conn:
        conn.execute("ATTACH DATABASE ? AS other", (str(second),))
        for table in TABLES:
            cols = ", ".join(r[1] for r in conn.execute(f"PRAGMA table_info({table.name})")
                             if r[1] not in ("search_rowid", "search_dirty"))
            where = " WHERE name != 'search_tokenizer'" if table.name == "meta" else ""
            typed = ", ".join(f"typeof({c}), {c}" for c in cols.split(", "))
            mine = f"SELECT {typed} FROM main.{table.name}{where}"
            theirs = f"SELECT {typed} FROM other.{table.name}{where}"
            (lost,) = conn.execute(f"SELECT count(*) FROM ({mine} EXCEPT {theirs})").fetchone()
            assert lost == 0, f"{lost} rows of {table.name} differ or are missing"
            (extra,) = conn.execute(f"SELECT count(*) FROM ({theirs} EXCEPT {mine})").fetchone()
            if extra:
                out[table.name] = extra
    return out


def test_migrate_round_trips_every_row(tmp_path: Path) -> None:
    """A SQLite archive copied to PostgreSQL and back holds exactly the rows it held;
    a second run copies nothing twice; the copy on PostgreSQL works as an archive."""
    from tidings.store.postgres._transfer import migrate_archive

    first = tmp_path / "first.sqlite3"
    with SqliteStorage(first) as lite:
        _fill_archive(lite, 2001)
    _multiply(first, 2001, 50)
    target = pgserver.schema_url()
    counts = migrate_archive(first, target)
    assert counts["items"] == counts["story_members"] == 100_000
    assert counts["versions"] > 100_000 and counts["discoveries"] > 30_000
    assert counts["raw_responses"] == 5 and counts["story_links"] == 1
    assert migrate_archive(first, target) == counts  # run again: resumes, nothing doubled
    with PostgresStorage(target, pool_size=2) as pg:
        assert pg.unindexed_count() == 100_000  # PostgreSQL builds its own index
        pg.index_pending(100)
        assert [h.item.title for h in pg.search(SearchQuery(terms=("r8",)))] == ["r8"]
        assert pg.add_user("second", "", False, at(0)).id == 2  # sequences moved on
        assert pg.add_saved_search("second", "go", at(0)).id == 2
        assert pg.lease_holders() == ["host:1:2"]
        token = pg.find_token_by_fever_key("md5")
        assert token is not None and token.id == "t1"
    back = tmp_path / "back.sqlite3"
    assert migrate_archive(target, back) == {**counts, "users": 2, "saved_searches": 2}
    assert _differences(first, back) == {"users": 1, "saved_searches": 1}  # the new ones


def test_raw_pages_stored_from_many_threads_at_once(pg: PostgresStorage) -> None:
    """Cluster workers write raw pages from several writer threads; a zstd compressor
    shared between them crashed the process (a segfault in the C backend)."""
    bodies = {f"https://f.example/{t}/{n}": (f"<rss>{t}-{n}</rss>" * 3000).encode()
              for t in range(8) for n in range(25)}
    urls = sorted(bodies)

    def put(part: list[str]) -> None:
        for url in part:
            pg.put_raw(RawResponse(url=url, final_url=url, status=200, headers={},
                                   fetched_at=at(0), source_id="s0", body=bodies[url]))

    threads = [threading.Thread(target=put, args=(urls[t::8],)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {r.url: r.body for r in pg.iter_raw()} == bodies


def test_a_batch_the_server_refuses_inside_a_unit_undoes_only_itself(pg: PostgresStorage) -> None:
    """The server's own errors, in the batch statement (read back at once) and in a
    version row after a revision (sent, not read back): each undoes its call alone
    and the unit goes on."""
    letters = random.Random(1).choices("abcdefghijklmnopqrstuvwxyz0123456789", k=8000)
    huge = "".join(letters)  # a version hash longer than a btree entry may be, compressed
    ids = pg.apply_upserts(UpsertBatch(creates=[new("kept", "s0")]))
    with pg.write() as unit:
        unit.apply_upserts(UpsertBatch(creates=[new("before", "s0")]))
        with pytest.raises(StorageError, match="index row size"):
            unit.apply_upserts(UpsertBatch(creates=[new("refused", "s0", content_hash=huge)]))
        with pytest.raises(StorageError, match="index row size"):
            unit.apply_upserts(UpsertBatch(
                creates=[new("with-revision", "s0")],
                revisions=[Revision(ids["kept"], fields("Changed", content_hash=huge), at(5))]))
        unit.apply_upserts(UpsertBatch(creates=[new("after", "s0")]))
    assert set(pg.lookup_items(["before", "refused", "with-revision", "after"])) == {
        "before", "after"}
    assert pg.get_item(ids["kept"]).title == "Hello"


def test_bodies_are_compressed_with_lz4_and_read_back_whole(pg: PostgresStorage) -> None:
    body = "".join(f"<p>paragraph {n} 段落{n}，重复的文字。</p>" for n in range(400))
    ids = pg.apply_upserts(UpsertBatch(creates=[new("long", body=body, content_hash="h1"),
                                                  new("short")]))
    assert pg.get_item(ids["long"]).body == body
    assert pg.lookup_items(["long"])["long"].body == body
    with pg._db.read() as conn:
        (method,) = conn.row("SELECT pg_column_compression(body) FROM items WHERE id = ?",
                             [ids["long"]])
        (lz4,) = conn.row("SELECT current_setting('server_version_num')::integer >= 140000")
    assert method == ("lz4" if lz4 else "pglz")


def test_pooled_connections_commit_without_waiting_for_the_disk(pg: PostgresStorage) -> None:
    with pg._db.read() as conn:
        assert conn.row("SHOW synchronous_commit") == ("off",)


def test_an_indexer_does_not_hold_up_a_discovery_of_the_items_it_indexes(
        pg: PostgresStorage, monkeypatch: pytest.MonkeyPatch) -> None:
    """Indexing locks its batch against the other indexers only: a worker recording that
    another source lists one of those items (its foreign key check) goes on meanwhile."""
    import tidings.store.postgres._search as search

    item_id = pg.apply_upserts(UpsertBatch(creates=[new("wire", title="tidal")]))["wire"]
    inside, release = threading.Event(), threading.Event()
    plain = search.tsvector

    def held(*args: object) -> str:
        inside.set()
        release.wait(20)
        return plain(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(search, "tsvector", held)
    indexer = threading.Thread(target=pg.index_pending)
    indexer.start()
    try:
        assert inside.wait(10)
        discovery = threading.Thread(target=pg.apply_upserts, args=(UpsertBatch(discoveries=[
            Discovery(SOURCES[1], at(5), item_id=item_id)]),))
        discovery.start()
        discovery.join(5)
        assert not discovery.is_alive(), "the discovery waited for the indexer's batch"
    finally:
        release.set()
        indexer.join(20)
    assert pg.unindexed_count() == 0
