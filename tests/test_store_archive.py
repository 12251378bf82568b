"""Contract: raw archive, backups, migrations, opening, and readers beside a writer."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import zlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from storage_contract import T0, at, new, source
from tidings.errors import ConfigError, NotFoundError, StorageError
from tidings.model import PaidCall, ProviderTrouble, RawResponse, Spend
from tidings.settings import Settings
from tidings.store import open_storage
from tidings.store.backup import make_backup, rotate_backups
from tidings.store.base import Discovery, SearchQuery, SourceUpdate, Storage, UpsertBatch
from tidings.store.sql.reading import FINGERPRINTS
from tidings.store.sqlite import SqliteStorage
from tidings.store.sqlite._schema import MIGRATIONS, _statements


def raw(minutes: float, key: str | None = None, body: bytes = b"<rss>" + b"x" * 5000,
        source_id: str | None = "feed") -> RawResponse:
    return RawResponse(url="https://feed.example/rss", final_url="https://feed.example/rss?x",
                       fetched_at=at(minutes), status=200,
                       headers={"content-type": "application/rss+xml", "etag": '"1"'},
                       body=body, source_id=source_id, item_key=key)


def test_raw_round_trip_is_compressed(storage: Storage, tmp_path: Path) -> None:
    big, small = raw(0), raw(1, body=b"\x00\x01")
    storage.put_raw(big)
    storage.put_raw(small)
    assert list(storage.iter_raw()) == [big, small]
    if isinstance(storage, SqliteStorage):
        with sqlite3.connect(storage.path) as conn:
            sizes = conn.execute("SELECT length(body), size FROM raw_responses ORDER BY id")
            (stored, original), _ = sizes.fetchall()
        assert stored < original / 10


def test_raw_rows_written_with_zlib_stay_readable(tmp_path: Path) -> None:
    """Archives from before the switch to zstd keep their zlib rows."""
    storage = SqliteStorage(tmp_path / "old.sqlite3")
    body = b"<rss>" + b"old archive " * 500
    storage.put_raw(raw(0, body=body, source_id=None))
    with sqlite3.connect(storage.path) as conn:
        conn.execute("UPDATE raw_responses SET encoding = 'zlib', body = ?",
                     (zlib.compress(body, 6),))
    assert [r.body for r in storage.iter_raw()] == [body]
    storage.close()


def test_raw_bodies_stored_from_many_threads_at_once_read_back_intact(
        storage: Storage) -> None:
    """Fetch threads pack their own bodies outside the write lock; with one shared
    zstd compressor concurrent packs corrupt or crash (a worker died of it)."""
    bodies = {f"t{t}-{n}": (f"<rss>{t}:{n} ".encode() + os.urandom(64).hex().encode() * 400)
              for t in range(8) for n in range(25)}
    start = threading.Barrier(8)
    errors: list[BaseException] = []

    def store(t: int) -> None:
        start.wait()
        try:
            for n in range(25):
                key = f"t{t}-{n}"
                storage.put_raw(raw(n, key=key, body=bodies[key]))
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=store, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert {r.item_key: r.body for r in storage.iter_raw()} == bodies


def test_iter_raw_filters_and_long_histories(storage: Storage) -> None:
    for n in range(450):
        storage.put_raw(raw(n, key="k1" if n % 3 == 0 else None,
                            source_id="a" if n % 2 else "b", body=str(n).encode()))
    everything = list(storage.iter_raw())
    assert len(everything) == 450 and everything[0].fetched_at == at(0)
    assert len(list(storage.iter_raw(source_id="a"))) == 225
    assert len(list(storage.iter_raw(item_key="k1"))) == 150
    assert [r.body for r in storage.iter_raw(since=at(448))] == [b"448", b"449"]


def test_prune_keeps_the_newest_raw_of_items_in_use(storage: Storage) -> None:
    storage.add_source(source("feed"))
    storage.apply_upserts(UpsertBatch(creates=[new("live")]))
    for n, key in enumerate(["live", "live", "gone", None, "live"]):
        storage.put_raw(raw(n, key=key, body=f"{n}".encode()))
    assert storage.prune_raw(at(4)) == 4
    assert [r.body for r in storage.iter_raw()] == [b"4"]
    assert storage.prune_raw(at(10)) == 0  # the newest for "live" stays
    storage.put_raw(raw(2, key="live", body=b"old"))
    assert storage.prune_raw(at(10)) == 1


def test_backup_is_consistent_while_writing(storage: Storage, tmp_path: Path) -> None:
    storage.add_source(source("feed"))
    stop = threading.Event()
    written: list[int] = []

    def writer() -> None:
        n = 0
        while not stop.is_set():
            storage.apply_upserts(UpsertBatch(creates=[new(f"k{n}-{i}") for i in range(50)]))
            written.append(n)
            n += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        while len(written) < 3:
            time.sleep(0.01)
        copies = [storage.backup(tmp_path, f"copy{i}") for i in range(3)]
    finally:
        stop.set()
        thread.join()
    for copy in copies:
        with SqliteStorage(copy) as restored:
            (count,) = {restored.archive_stats().items}
            assert count % 50 == 0 and count > 0  # whole batches only
    assert not list(tmp_path.glob("*.partial"))


def test_make_backup_and_rotation(storage: Storage, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    start = datetime(2023, 1, 1, 3, tzinfo=UTC)
    for day in range(500):
        (folder / f"tidings-{(start + timedelta(days=day)).date()}.sqlite3").parent.mkdir(
            exist_ok=True)
        (folder / f"tidings-{(start + timedelta(days=day)).date()}.sqlite3").write_bytes(b"")
    (folder / "notes.txt").write_text("keep me")
    now = start + timedelta(days=500)
    made = make_backup(storage, folder, now)
    assert made.name == f"tidings-{now:%Y-%m-%d-%H%M%S}.sqlite3" and made.stat().st_size > 0
    names = sorted(p.name for p in folder.glob("tidings-*.sqlite3"))
    assert len(names) == 14 + 11  # 14 days (two months) and the 11 months before them
    assert names[-1] == made.name and (folder / "notes.txt").exists()
    assert "tidings-2024-02-29.sqlite3" in names  # the newest of its month
    assert rotate_backups(folder, now, suffix=storage.backup_suffix) == []


def test_a_new_archive_is_private_to_its_owner(tmp_path: Path) -> None:
    """It holds password hashes and session digests (R-API-6)."""
    path = tmp_path / "private.sqlite3"
    with SqliteStorage(path) as store:
        store.add_source(source("feed"))
        for name in ("private.sqlite3", "private.sqlite3-wal", "private.sqlite3-shm"):
            assert (tmp_path / name).stat().st_mode & 0o077 == 0, name


def test_backups_are_private_to_their_owner(tmp_path: Path) -> None:
    old = os.umask(0o022)  # files made the ordinary way would be world-readable
    try:
        with SqliteStorage(tmp_path / "db.sqlite3") as store:
            store.add_source(source("feed"))
            copy = store.backup(tmp_path / "backups", "copy")
            again = store.backup(tmp_path / "backups", "copy")  # replacing today's
    finally:
        os.umask(old)
    assert copy == again
    assert copy.stat().st_mode & 0o077 == 0


def test_opening_an_archive_others_may_read_makes_it_private(tmp_path: Path) -> None:
    path = tmp_path / "loose.sqlite3"
    with SqliteStorage(path) as store:
        store.add_source(source("feed"))
    path.chmod(0o644)
    with SqliteStorage(path) as store:
        assert [s.id for s in store.list_sources()] == ["feed"]
        assert path.stat().st_mode & 0o777 == 0o600


def test_migrations_are_recorded_and_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    with SqliteStorage(path) as first:
        first.add_source(source("feed"))
    with SqliteStorage(path) as again:
        assert [s.id for s in again.list_sources()] == ["feed"]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with pytest.raises(StorageError, match="newer"):
        SqliteStorage(path)


def _database_at(path: Path, version: int) -> sqlite3.Connection:
    """A database as an older tidings left it: the first ``version`` migrations only."""
    conn = sqlite3.connect(path, isolation_level=None)
    for script in MIGRATIONS[:version]:
        for statement in _statements(script):
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {version}")
    return conn


_OLD_ITEM = ("INSERT INTO items (key, source_id, url, title, summary, body, body_state, "
             "discovered_at, updated_at, sort_time, title_fp) "
             "VALUES (?, 'feed', ?, ?, '', ?, 'ok', 0, 0, 0, ?)")


@pytest.mark.parametrize("version", [4, 5])
def test_migrations_end_with_fingerprints_on_items_and_a_rebuilt_search_index(
        tmp_path: Path, version: int) -> None:
    """Schemas 4 and 5 kept fingerprints elsewhere (a B-tree, then a search column);
    every later schema has them on items again and a search index without them."""
    path = tmp_path / "db.sqlite3"
    with _database_at(path, version) as conn:
        conn.execute("INSERT INTO sources (id, kind, url, visibility, interval_min, health, "
                     "cost_class, identity_mode, created_at) VALUES "
                     "('feed', 'rss', 'https://feed.example/rss', 'editorial', 30, 'ok', "
                     "'free', 'guid', 0)")
        conn.execute(_OLD_ITEM, ("k1", "https://a/1", "Old story", "<p>x</p>", "aa11"))
        conn.execute(_OLD_ITEM, ("k2", "https://a/2", "Hello", "<p>y</p>", "aa11"))
        conn.execute("INSERT INTO item_search (rowid, title) VALUES (1, 'old story')")
        conn.execute("UPDATE items SET search_rowid = 1, search_dirty = 0 WHERE key = 'k1'")
    with SqliteStorage(path) as migrated:
        assert [i.id for i in migrated.fingerprint_groups(["aa11"])["aa11"]] == [1, 2]
        assert migrated.unindexed_count() == 2
        assert migrated.index_pending() == 2
        assert [h.item.id for h in migrated.search(SearchQuery(terms=("story",)))] == [1]
        migrated.delete_item(1, at(9))  # out of the index with the tokens it went in with
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM item_search WHERE item_search MATCH 'story'"
                            ).fetchone() == (0,)
        columns = [r[1] for r in conn.execute("PRAGMA table_info(item_search)")]
        assert columns == ["title", "body", "title_chars", "body_chars"]
        # the plan of a large archive, not of these two rows: the statistics the
        # closing ``PRAGMA optimize`` gathered on two rows would make a scan look cheap
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone():
            conn.execute("DELETE FROM sqlite_stat1")
    with sqlite3.connect(path) as conn:
        plan = " ".join(r[3] for r in conn.execute(
            "EXPLAIN QUERY PLAN " + FINGERPRINTS.format("title_fp IN (?, ?)"), ("aa11", "bb22")))
        assert "USING INDEX items_title_fp" in plan, plan


def test_migration_6_files_sources_in_folders_and_flags_lossy_items(tmp_path: Path) -> None:
    """A source's ``category`` config key becomes its folder; stored text holding U+FFFD
    is flagged, so a lookup knows to load that body for the lossy comparison."""
    path = tmp_path / "db.sqlite3"
    with _database_at(path, 5) as conn:
        for sid, config in (("feed", '{"category": "AI labs", "proxy": true}'),
                            ("plain", "{}"), ("odd", '{"category": 7}')):
            conn.execute("INSERT INTO sources (id, kind, url, config, visibility, interval_min,"
                         " health, cost_class, identity_mode, created_at) VALUES "
                         "(?, 'rss', ?, ?, 'editorial', 30, 'ok', 'free', 'guid', 0)",
                         (sid, f"https://{sid}.example/rss", config))
        conn.execute(_OLD_ITEM, ("k1", "https://a/1", "Fine", "<p>whole</p>", ""))
        conn.execute(_OLD_ITEM, ("k2", "https://a/2", "Holes", "<p>t\ufffdxt</p>", ""))
    with SqliteStorage(path) as migrated:
        sources = {s.id: s for s in migrated.list_sources()}
        assert sources["feed"].folder == "AI labs" and dict(sources["feed"].config) == {
            "proxy": True}
        assert sources["plain"].folder is None and sources["odd"].folder is None
        assert dict(sources["odd"].config) == {}
        assert migrated.list_folders() == ["AI labs"]
        state = migrated.lookup_items(["k1", "k2"], bodies_for=())
        assert (state["k1"].lossy, state["k2"].lossy) == (False, True)
        assert (state["k1"].body, state["k2"].body) == (None, "<p>t\ufffdxt</p>")


def test_open_storage_picks_the_backend(settings: Settings) -> None:
    storage = open_storage(settings)
    try:
        assert settings.database_path.exists()
    finally:
        storage.close()
    with pytest.raises(StorageError, match=r"^cannot connect to postgresql://u@127.0.0.1:1/x: "):
        # nothing listens on port 1: one line naming the server (never the password)
        open_storage(replace(settings, database_url="postgresql://u:secret@127.0.0.1:1/x"))
    with pytest.raises(ConfigError, match="mysql"):
        open_storage(replace(settings, database_url="mysql://localhost/x"))


def test_readers_are_not_blocked_by_a_writer(storage: Storage) -> None:
    storage.add_source(source("feed"))
    holding = threading.Event()
    release = threading.Event()

    def long_write() -> None:
        with storage.write() as unit:
            unit.update_source("feed", SourceUpdate(title="changing"))
            holding.set()
            release.wait(5)

    thread = threading.Thread(target=long_write)
    thread.start()
    try:
        assert holding.wait(5)
        started = time.perf_counter()
        assert storage.get_source("feed").title == "Title of feed"  # the committed snapshot
        assert time.perf_counter() - started < 0.5
    finally:
        release.set()
        thread.join()
    assert storage.get_source("feed").title == "changing"


def test_naive_datetimes_are_refused(storage: Storage) -> None:
    storage.add_source(source("feed"))
    with pytest.raises(ConfigError, match="naive"):
        storage.start_run("feed", datetime(2024, 1, 1))
    assert storage.list_runs() == []
    assert T0.tzinfo is UTC


def test_a_unit_commits_its_calls_together(storage: Storage) -> None:
    storage.add_source(source())
    with storage.write() as unit:
        unit.put_raw(raw(0))
        unit.apply_upserts(UpsertBatch(creates=[new("k1")]))
        # a reader on another thread does not see the open transaction's writes
        seen: list[int] = []
        reader = threading.Thread(target=lambda: seen.append(len(list(storage.iter_raw()))))
        reader.start()
        reader.join()
        assert seen == [0]
    assert len(list(storage.iter_raw())) == 1
    assert set(storage.lookup_items(["k1"])) == {"k1"}


def test_reads_through_a_unit_see_its_writes(storage: Storage) -> None:
    """Runs stored together (one commit for several) decide on what the ones before
    them wrote: a reprint of an item created earlier in the same commit is known.
    Reads through the storage itself see only what is committed."""
    storage.add_source(source())
    with storage.write() as unit:
        unit.apply_upserts(UpsertBatch(creates=[new("k1")]))
        assert set(unit.lookup_items(["k1"])) == {"k1"}
        unit.update_source("feed", SourceUpdate(fail_count=3))
        assert unit.get_source("feed").fail_count == 3
        assert len(list(unit.iter_raw())) == 0
        unit.put_raw(raw(0))
        assert len(list(unit.iter_raw())) == 1
        assert storage.get_source("feed").fail_count == 0
    assert storage.get_source("feed").fail_count == 3


def test_a_unit_rolls_back_every_call_on_error(storage: Storage) -> None:
    storage.add_source(source())
    with pytest.raises(RuntimeError), storage.write() as unit:
        unit.put_raw(raw(0))
        unit.apply_upserts(UpsertBatch(creates=[new("k1")]))
        raise RuntimeError("boom")
    assert list(storage.iter_raw()) == []
    assert storage.lookup_items(["k1"]) == {}
    storage.put_raw(raw(1))  # the writer is free again
    assert len(list(storage.iter_raw())) == 1


def test_a_failed_call_inside_a_unit_undoes_only_itself(storage: Storage) -> None:
    storage.add_source(source())
    with storage.write() as unit:
        unit.put_raw(raw(0))
        with pytest.raises(ConfigError):  # the second create of k2 fails the whole call
            unit.apply_upserts(UpsertBatch(creates=[new("k2"), new("k2")]))
        with pytest.raises(NotFoundError):  # fails after inserting k3: k3 must vanish too
            unit.apply_upserts(UpsertBatch(creates=[new("k3")], discoveries=[
                Discovery("feed", at(0), item_id=999_999)]))
        unit.apply_upserts(UpsertBatch(creates=[new("k4")]))
        with pytest.raises(RuntimeError), unit.nested() as part:  # a nested part, undone
            part.put_raw(raw(1))
            raise RuntimeError("undo the part")
    assert len(list(storage.iter_raw())) == 1
    assert set(storage.lookup_items(["k2", "k3", "k4"])) == {"k4"}



def test_spend_after_adds_only_the_calls_recorded_since(storage: Storage) -> None:
    storage.record_paid_call(PaidCall("x", "search", ("a",), "ok", 0.5, 10, at(-60)))
    storage.record_paid_call(PaidCall("x", "search", ("a",), "ok", 0.25, 10, at(1)))
    storage.record_paid_call(PaidCall("wx", "list", ("b",), "ok", 0.14, 10, at(2)))
    first, counted = storage.spend_after(at(0), 0)
    assert first == {"x": Spend(1, 0.25), "wx": Spend(1, 0.14)}, "the day's calls only"
    assert first == storage.spend_since(at(0))
    assert storage.spend_after(at(0), counted) == ({}, counted), "nothing new"
    storage.record_paid_call(PaidCall("x", "search", ("a",), "failed", 0.25, 10, at(3)))
    more, later = storage.spend_after(at(0), counted)
    assert more == {"x": Spend(1, 0.25)} and later > counted


def test_images_are_kept_once_by_their_content_address(storage: Storage) -> None:
    name = "ab/cd/" + "ab" * 32 + ".png"
    assert storage.get_media(name) is None
    storage.put_media(name, b"\x89PNG first", at(0))
    storage.put_media(name, b"\x89PNG again", at(1))  # a name never changes meaning
    assert storage.get_media(name) == b"\x89PNG first"
    big = bytes(range(256)) * 8192  # 2 MiB, every byte value
    storage.put_media("cd/ef/big.jpg", big, at(2))
    assert storage.get_media("cd/ef/big.jpg") == big


def test_a_providers_trouble_is_kept_replaced_and_cleared(storage: Storage) -> None:
    assert storage.paid_troubles() == {}
    first = ProviderTrouble("x", "x: rate limited (HTTP 429)", at(0), at(2))
    storage.set_paid_trouble(first)
    storage.set_paid_trouble(ProviderTrouble("wx", "wx: balance used up", at(1), at(16)))
    worse = replace(first, reason="x: API key …0001 refused (HTTP 401)", until=at(15))
    storage.set_paid_trouble(worse)
    assert storage.paid_troubles() == {"x": worse, "wx": storage.paid_troubles()["wx"]}
    storage.clear_paid_trouble("x")
    storage.clear_paid_trouble("nobody")
    assert list(storage.paid_troubles()) == ["wx"]
