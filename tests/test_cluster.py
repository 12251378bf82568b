"""The cluster runner for real: one PostgreSQL, three `tidings worker` processes, a
500-feed farm on 127.0.0.1 with reprints, two rounds, one worker killed mid-round."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path
from xml.sax.saxutils import escape

import psycopg
import pytest
from aiohttp import web

import pgserver
from farm import T0, Farm, FeedSpec, running_farm
from storage_contract import source
from tidings.app import Tidings
from tidings.settings import load_settings
from tidings.store.sqlite import SqliteStorage

ROOT = Path(__file__).resolve().parent.parent


class WatchedFarm(Farm):
    """A farm that records how many requests each feed serves at once."""

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self.in_flight: dict[str, int] = {}
        self.most_at_once = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        feed = request.match_info["n"]
        self.in_flight[feed] = self.in_flight.get(feed, 0) + 1
        self.most_at_once = max(self.most_at_once, self.in_flight[feed])
        try:
            await asyncio.sleep(0.02)  # long enough for an overlap to show
            return await super().handle(request)
        finally:
            self.in_flight[feed] -= 1


def _env(url: str, data: Path) -> dict[str, str]:
    return {**os.environ, "TIDINGS_DATABASE_URL": url, "TIDINGS_HOME": str(data),
            "TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1", "TIDINGS_PER_HOST_DELAY": "0",
            "TIDINGS_PER_HOST_CONCURRENCY": "64", "PYTHONUNBUFFERED": "1"}


def _start_worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "tidings", "-v", "worker", "--concurrency", "16"],
            env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)


def _wait(check: Callable[[], bool], seconds: float, what: str,
          logs: list[Path] | None = None) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    problems = [line for log in logs or () for line in log.read_text().splitlines()
                if "Error" in line or "Failed" in line or "WARNING" in line]
    raise AssertionError(f"timed out waiting for {what}; " + "\n".join(problems[-20:]))


def _query(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return list(conn.execute(sql.encode()).fetchall())


def _finished_since(url: str, since: datetime) -> int:
    """Sources whose latest run started at or after ``since`` and has ended."""
    micros = int(since.timestamp() * 1_000_000)
    return int(_query(url, f"SELECT count(DISTINCT source_id) FROM fetch_runs "
                           f"WHERE started_at >= {micros} AND outcome NOT IN "
                           "('running', 'abandoned')")[0][0])  # type: ignore[arg-type]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[str, Path, WatchedFarm]]:
    url = pgserver.schema_url()
    with running_farm(WatchedFarm(feeds=500)) as farm:
        yield url, tmp_path, farm  # type: ignore[misc]


@pytest.mark.postgres
@pytest.mark.timeout(900)
def test_three_workers_one_killed_collect_everything_exactly_once(
        cluster: tuple[str, Path, WatchedFarm]) -> None:
    url, tmp, farm = cluster
    settings = load_settings(tmp / "data", env=_env(url, tmp / "data"))
    tidings = Tidings.open(settings, create=True)
    try:
        asyncio.run(tidings.import_opml(farm.opml()))
        sources = [s.id for s in tidings.sources()]
    finally:
        asyncio.run(tidings.aclose())
    assert len(sources) == 500
    env = _env(url, tmp / "data")
    logs = [tmp / f"worker{n}.log" for n in range(3)]
    workers = [_start_worker(env, log) for log in logs]
    try:
        first = datetime.now(UTC)
        _wait(lambda: sum(farm.requests.values()) >= 60
              and "Starting job tidings:collect" in logs[0].read_text(), 120,
              "the first fetches, some by worker 0")
        workers[0].send_signal(signal.SIGKILL)  # mid-round: jobs in hand, runs open
        workers[0].wait(10)
        _wait(lambda: _finished_since(url, first) == 500, 300, "round 1 on every source",
              logs)
        new_paths = farm.tick()
        second = datetime.now(UTC)
        _query_exec(url, "UPDATE sources SET next_fetch_at = 0")  # everything due again
        _wait(lambda: _finished_since(url, second) == 500, 300, "round 2 on every source",
              logs)
    finally:
        for w in workers[1:]:
            w.send_signal(signal.SIGTERM)
        for w in workers[1:]:
            try:
                w.wait(30)
            except subprocess.TimeoutExpired:
                w.kill()
    urls = [str(r[0]) for r in _query(url, "SELECT url FROM items")]
    paths = {u.replace(farm.base, "").split("?")[0] for u in urls}
    assert len(urls) == len(set(urls)), "an item was stored twice"
    assert paths == farm.unique_paths() and new_paths <= paths
    assert farm.most_at_once == 1, "a feed was fetched twice at the same time"
    # the killed worker's jobs went back to the queue (and ran: round 1 completed)
    retried = sum(int(n) for log in logs[1:]
                  for n in re.findall(r"(\d+) stalled jobs retried", log.read_text()))
    assert retried > 0, "the killed worker's jobs were never retried"
    stuck = _query(url, "SELECT count(*) FROM fetch_runs WHERE outcome = 'running'")
    assert stuck[0][0] == 0
    for w in workers[1:]:
        assert w.returncode == 0, logs[workers.index(w)].read_text()[-2000:]


def _query_exec(url: str, sql: str) -> None:
    with psycopg.connect(url) as conn:
        conn.execute(sql.encode())


def _cli(data: Path, *args: str, url: str = "", code: int = 0) -> str:
    from click.testing import CliRunner

    from tidings.cli import cli

    env = {"TIDINGS_DATABASE_URL": url, "TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1"}
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env=env)
    assert result.exit_code == code, result.output
    return result.output


def test_cluster_commands_refuse_a_sqlite_archive_in_one_line(tmp_path: Path) -> None:
    _cli(tmp_path, "init", "--empty")
    for command in (["worker"], ["status"]):
        out = _cli(tmp_path, *command, code=1)
        assert out.count("\n") == 1 and "needs a PostgreSQL archive" in out


@pytest.mark.postgres
def test_a_wrong_database_url_is_one_line_and_exit_1(tmp_path: Path) -> None:
    pgserver.database_url()  # skips (outside CI) when there is no server at all
    for command in (["worker"], ["status"], ["stats"]):
        out = _cli(tmp_path, *command, url="postgresql://nobody@127.0.0.1:5432/no_such_db",
                   code=1)
        assert out.startswith("tidings: cannot connect to postgresql://nobody@127.0.0.1")
        assert out.count("\n") == 1


@pytest.mark.postgres
def test_status_and_migrate_both_ways(tmp_path: Path) -> None:
    lite = tmp_path / "lite"
    _cli(lite, "init", "--empty")
    with SqliteStorage(lite / "tidings.sqlite3") as store:  # never fetched: no network
        store.add_source(source("ex"))
    url = pgserver.schema_url()
    out = _cli(lite, "migrate", "--to", url)
    assert "1 sources" in out
    assert _cli(lite, "migrate", "--to", url) == out  # again: resumes, nothing twice
    status = _cli(tmp_path / "pg", "status", url=url)
    assert "workers alive: 0" in status and "due sources: 1" in status
    back = tmp_path / "back.sqlite3"
    assert "1 sources" in _cli(tmp_path / "pg", "migrate", "--to", str(back), url=url)
    out = _cli(tmp_path / "pg", "migrate", "--to", url, url=url, code=1)
    assert out == "tidings: migrate: the source and the target are the same archive\n"
    out = _cli(lite, "migrate", "--to", str(back), code=1)
    assert "copy a SQLite archive --to postgresql://" in out


@pytest.mark.postgres
async def test_deferring_skips_sources_that_already_wait() -> None:
    """A batch refused for one source already waiting goes one by one: every other
    source gets its job, and no source gets a second."""
    from tidings.schedule.cluster import defer_collect, make_app
    from tidings.store.postgres import ensure_queue_schema, queue_connector

    url = pgserver.schema_url()
    ensure_queue_schema(url)
    app = make_app(queue_connector(url))
    async with app.open_async():
        assert await defer_collect(app, ["b"]) == 1
        assert await defer_collect(app, ["a", "b", "c"]) == 2
        assert await defer_collect(app, [f"s{n}" for n in range(450)]) == 450  # 3 batches
    rows = _query(url, "SELECT args->>'source_id', lock, queueing_lock FROM procrastinate_jobs "
                       "WHERE status = 'todo' ORDER BY 1")
    waiting = [r[0] for r in rows]
    assert sorted(waiting) == sorted(["a", "b", "c", *(f"s{n}" for n in range(450))])
    assert all(r[1] == r[2] == f"source:{r[0]}" for r in rows)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("collect", [False, True])
def test_serve_no_collect_serves_without_collecting(tmp_path: Path, collect: bool) -> None:
    import urllib.request

    with running_farm(Farm(feeds=3)) as farm:
        data = tmp_path / "data"
        env = {**_env("", data), "TIDINGS_DATABASE_URL": ""}
        _cli(data, "init", "--empty")
        (tmp_path / "farm.opml").write_bytes(farm.opml())
        _cli(data, "import-opml", str(tmp_path / "farm.opml"))
        port = _free_port()
        args = ["serve", "--port", str(port), *([] if collect else ["--no-collect"])]
        log = tmp_path / "serve.log"
        with log.open("wb") as err_out:
            proc = subprocess.Popen([sys.executable, "-m", "tidings", *args], env=env,
                                    cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err_out)
        try:
            def up() -> bool:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz",
                                                timeout=2):
                        return True
                except OSError as exc:
                    return "HTTP Error" in str(exc)  # answering, whatever it says

            _wait(up, 60, "the reader")
            said = "collecting on a schedule" if collect else "not collecting (--no-collect)"
            _wait(lambda: said in log.read_text(), 30, f"the line {said!r}")
            if collect:
                _wait(lambda: sum(farm.requests.values()) >= 3, 60, "the scheduler's fetches")
            else:
                # the line is written where serve chose not to start a scheduler at all
                assert "collecting on a schedule" not in log.read_text()
                assert farm.requests == {}
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        err = log.read_bytes()
        # uvicorn shuts down cleanly, then re-raises the SIGTERM it caught
        assert proc.returncode in (0, -signal.SIGTERM), err.decode()[-2000:]
        assert b"Traceback" not in err


WIRE = [("Rust 1.85 released with the Rust 2024 edition",
         "The Rust team released Rust 1.85, which stabilizes the 2024 edition and async "
         "closures."),
        ("Rust 1.85 stabilizes the Rust 2024 edition and async closures",
         "Rust 1.85 is out today, stabilizing the Rust 2024 edition and async closures."),
        ("Announcing Rust 1.85.0 and Rust 2024",
         "The Rust team is happy to announce Rust 1.85.0, which stabilizes the 2024 edition "
         "and async closures.")]
LOCAL = ["Harbour fire closes the ferry terminal overnight",
         "Council votes to keep the old library open on Sundays",
         "Rain delays the opening match of the cricket season",
         "New bakery on the high street sells out by nine",
         "School choir wins the regional singing contest",
         "Bridge repairs will close the river road for a month"]


class StoryFarm(Farm):
    """Feeds whose wire copies sit at each feed's own address, in one of three
    wordings (as agencies' reprints do): different items, one story."""

    def __init__(self, feeds: int) -> None:
        super().__init__(feeds, per_feed=0)
        self.leads: dict[str, str] = {}
        for spec in self.ok_feeds():
            title = LOCAL[spec.index % len(LOCAL)] + f" in district {spec.index}"
            spec.items.append((f"/local/{spec.index}", title, T0))
            self.leads[f"/local/{spec.index}"] = f"{title}, the district office said."
            if spec.index % 3 == 0:
                wire_title, lead = WIRE[spec.index // 3 % len(WIRE)]
                spec.items.append((f"/copy/{spec.index}", wire_title, T0))
                self.leads[f"/copy/{spec.index}"] = lead

    def _document(self, spec: FeedSpec) -> bytes:
        items = "".join(
            f"<item><title>{escape(title)}</title><link>{escape(self.base + link)}</link>"
            f"<guid>{escape(self.base + link)}</guid><pubDate>{format_datetime(when)}</pubDate>"
            f"<description>{escape(self.leads[link.split('?')[0]])}</description></item>"
            for link, title, when in spec.items if link.split("?")[0] in self.leads)
        return (f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
                f"<title>Feed {spec.index}</title><link>{self.base}/</link>{items}"
                "</channel></rss>").encode()


@pytest.mark.postgres
@pytest.mark.timeout(600)
def test_two_workers_place_wire_reprints_from_several_feeds_in_one_story(
        tmp_path: Path) -> None:
    """Story placement in cluster mode: one worker at a time places (the lock), every
    item gets a place, the wire copies of many feeds share one story, local news stays
    apart, and the partition is the one a single index (the embedded runner's) makes."""
    from tidings.pipeline.stories import Clusterer
    from tidings.store.postgres import PostgresStorage

    url = pgserver.schema_url()
    with running_farm(StoryFarm(feeds=40)) as farm:
        settings = load_settings(tmp_path / "data", env=_env(url, tmp_path / "data"))
        tidings = Tidings.open(settings, create=True)
        try:
            asyncio.run(tidings.import_opml(farm.opml()))
        finally:
            asyncio.run(tidings.aclose())
        env = _env(url, tmp_path / "data")
        logs = [tmp_path / f"worker{n}.log" for n in range(2)]
        start = datetime.now(UTC)
        workers = [_start_worker(env, log) for log in logs]
        try:
            _wait(lambda: _finished_since(url, start) == 40, 240, "a round on every source",
                  logs)
            _wait(lambda: _query(url, "SELECT count(*) FROM items")
                  == _query(url, "SELECT count(*) FROM story_members"), 120,
                  "every item placed", logs)
        finally:
            for w in workers:
                w.send_signal(signal.SIGTERM)
            for w in workers:
                w.wait(60)
    placers = [log for log in logs if "this worker places the stories" in log.read_text()]
    assert len(placers) == 1
    rows = _query(url, "SELECT i.url, i.source_id, m.cluster_id FROM items i "
                       "JOIN story_members m ON m.item_id = i.id")
    wire = [r for r in rows if "/copy/" in str(r[0])]
    local = [r for r in rows if "/local/" in str(r[0])]
    assert len(wire) == len([s for s in farm.ok_feeds() if s.index % 3 == 0]) >= 8
    assert len({r[2] for r in wire}) == 1, "the wire copies are not one story"
    assert not {r[2] for r in local} & {wire[0][2]}
    with PostgresStorage(url, pool_size=1) as pg:
        single = Clusterer()
        single.restart()
        placed = single.replay(pg.story_inputs(0, -1), pg.story_links())
        stored = pg.story_clusters([m.item_id for m in placed])
    assert {m.item_id: m.cluster_id for m in placed} == stored


@pytest.mark.postgres
def test_the_story_placer_lock_is_one_holder_and_moves_when_it_dies() -> None:
    from tidings.store.postgres import SessionLock

    url = pgserver.schema_url()
    first, second = SessionLock(url, "tidings:stories"), SessionLock(url, "tidings:stories")
    try:
        assert first.held() and not second.held()
        assert first.held()  # asked again: still the holder
        assert first._conn is not None
        _query(url, f"SELECT pg_terminate_backend({first._conn.info.backend_pid})")
        assert not first.held()  # its connection is gone, and the lock with it
        assert second.held() and not first.held()
        second.release()
        assert first.held()
    finally:
        first.release()
        second.release()
