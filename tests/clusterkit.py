"""What the cluster tests share: worker processes on a PostgreSQL archive, a farm that
sees overlapping fetches, waits on a condition, and queries of the queue."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import psycopg
from aiohttp import web

from farm import Farm

ROOT = Path(__file__).resolve().parent.parent


class WatchedFarm(Farm):
    """A farm that records how many requests each feed serves at once."""

    #: seconds each answer takes: long enough for an overlap to show
    delay = 0.02

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self.in_flight: dict[str, int] = {}
        self.most_at_once = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        feed = request.match_info["n"]
        self.in_flight[feed] = self.in_flight.get(feed, 0) + 1
        self.most_at_once = max(self.most_at_once, self.in_flight[feed])
        try:
            await asyncio.sleep(self.delay)
            return await super().handle(request)
        finally:
            self.in_flight[feed] -= 1


def worker_env(url: str, data: Path) -> dict[str, str]:
    return {**os.environ, "TIDINGS_DATABASE_URL": url, "TIDINGS_HOME": str(data),
            "TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1", "TIDINGS_PER_HOST_DELAY": "0",
            "TIDINGS_PER_HOST_CONCURRENCY": "64", "PYTHONUNBUFFERED": "1"}


def start_worker(env: dict[str, str], log: Path, concurrency: int = 16,
                 verbose: bool = True) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "tidings", *(["-v"] if verbose else []), "worker",
             "--concurrency", str(concurrency)],
            env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)


def wait_for(check: Callable[[], bool], seconds: float, what: str,
             logs: list[Path] | None = None, state: Callable[[], str] | None = None
             ) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    problems = [line for log in logs or () for line in log.read_text().splitlines()
                if "Error" in line or "Failed" in line or "WARNING" in line]
    now = f" ({state()})" if state else ""
    raise AssertionError(f"timed out waiting for {what}{now}; " + "\n".join(problems[-20:]))


def query(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return list(conn.execute(sql.encode()).fetchall())


def finished_since(url: str, since: datetime) -> int:
    """Sources whose latest run started at or after ``since`` and has ended."""
    micros = int(since.timestamp() * 1_000_000)
    return int(query(url, f"SELECT count(DISTINCT source_id) FROM fetch_runs "
                          f"WHERE started_at >= {micros} AND outcome NOT IN "
                          "('running', 'abandoned')")[0][0])  # type: ignore[arg-type]


def query_exec(url: str, sql: str) -> None:
    with psycopg.connect(url) as conn:
        conn.execute(sql.encode())


def dead_holder() -> str:
    """A lease holder on this host whose process has ended (as a killed worker)."""
    from tidings.pipeline.holders import Holder, this_process

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return str(Holder(this_process().host, proc.pid, this_process().started - 10))
