"""Chaos in a cluster (issue 30): two to four `tidings worker`s on one PostgreSQL archive
are SIGKILLed again and again while sources are made due, WebSub subscriptions lapse
and sources are added. A killed worker never stops the others: afterwards every
source was collected within 2 minutes of becoming due, no item is stored twice, no
feed was fetched twice at once, and no run or job is left running."""

from __future__ import annotations

import asyncio
import random
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest

import pgserver
from clusterkit import WatchedFarm, query, query_exec, start_worker, wait_for, worker_env
from farm import running_farm
from tidings.app import Tidings
from tidings.settings import load_settings
from tidings.store.postgres import ensure_queue_schema

FIRST = 100  # sources at the start; the farm's other feeds are added during the chaos
ROUNDS = 5
ROUND_SECONDS = 14.0
ALIVE = [2, 4, 3, 2, 3]  # workers alive after each round's kill and replacements
LATE = 120.0  # the bound: collected within 2 minutes of becoming due
STALLED_AFTER = 20  # the cluster's stall window (schedule/cluster.py)


class SlowFarm(WatchedFarm):
    delay = 0.8  # fetches take long enough that a killed worker dies holding some


def _us(when: datetime) -> int:
    return int(when.timestamp() * 1_000_000)


@dataclass
class Chaos:
    url: str
    tmp: Path
    env: dict[str, str]
    tidings: Tidings
    feeds: list[str]
    rng: random.Random = field(default_factory=lambda: random.Random(30))
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    due: dict[str, datetime] = field(default_factory=dict)  # source -> became due at
    pushed: list[str] = field(default_factory=list)  # a hub pushes: polled in 6 h only
    last_check: str = ""
    going: dict[str, set[int]] = field(default_factory=dict)  # runs going at the latest due
    events: dict[str, list[str]] = field(default_factory=dict)  # source -> what happened

    def note(self, ids: list[str], what: str) -> None:
        stamp = datetime.now(UTC).strftime("%H:%M:%S.%f")[:-3]
        for sid in ids:
            self.events.setdefault(sid, []).append(f"{stamp} {what}")

    def ids(self) -> list[str]:
        return [str(r[0]) for r in query(self.url, "SELECT id FROM sources ORDER BY id")]

    def start(self) -> None:
        log = self.tmp / f"worker{len(self.logs)}.log"
        self.logs.append(log)
        self.workers.append(start_worker(self.env, log, concurrency=4))

    def alive(self) -> list[subprocess.Popen[bytes]]:
        return [w for w in self.workers if w.poll() is None]

    def held(self) -> list[str]:
        return [str(r[0]) for r in query(self.url, "SELECT args->>'source_id' FROM "
                                         "procrastinate_jobs WHERE status = 'doing' AND "
                                         "task_name = 'tidings:collect'")]

    def make_due(self, ids: list[str]) -> None:
        """What a lapsed WebSub subscription does: the source is due now."""
        if not ids:
            return
        now = datetime.now(UTC)
        listed = ", ".join(f"'{i}'" for i in ids)
        # in one statement: the runs going at this moment, and the sources due now
        going = query(self.url, f"""WITH due AS (UPDATE sources SET next_fetch_at =
            {_us(now)} WHERE id IN ({listed}) RETURNING id)
            SELECT id, source_id FROM fetch_runs
            WHERE outcome = 'running' AND source_id IN ({listed})""")
        self.due.update(dict.fromkeys(ids, now))
        for sid in ids:  # each source's latest due counts the runs going then, no others
            self.going[sid] = {int(str(run)) for run, of in going if of == sid}
        self.note(ids, "due")

    def push(self, ids: list[str]) -> None:
        """A hub took these sources over: the next poll moves 6 hours out."""
        later = _us(datetime.now(UTC)) + 6 * 3600 * 1_000_000
        listed = ", ".join(f"'{i}'" for i in ids)
        query_exec(self.url, f"UPDATE sources SET next_fetch_at = {later} "
                             f"WHERE id IN ({listed})")
        self.pushed = ids
        self.note(ids, "pushed")

    def add(self, urls: list[str]) -> None:
        async def create() -> list[str]:
            return [(await self.tidings.sources.create(u, title=u.rsplit("/", 1)[1])).id
                    for u in urls]

        added = asyncio.run(create())
        self.due.update(dict.fromkeys(added, datetime.now(UTC)))

    def kill_one(self) -> None:
        """SIGKILL a worker while jobs are in hand; make those sources due again at once,
        so the scheduler queues a fresh job beside each job the dead worker holds."""
        wait_for(lambda: len(self.held()) >= 3, 30, "jobs in hand", self.logs)
        victim = self.rng.choice(self.alive())
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        self.make_due(self.held())

    def round(self, n: int) -> None:
        started = time.monotonic()
        self.make_due(self.rng.sample(self.ids(), 8))
        self.kill_one()
        self.make_due(self.pushed)  # last round's subscriptions lapse
        self.push(self.rng.sample([i for i in self.ids() if i not in self.held()], 5))
        self.add(self.feeds[FIRST + 4 * n:FIRST + 4 * n + 4])
        while len(self.alive()) < ALIVE[n]:
            self.start()
        time.sleep(max(0.0, ROUND_SECONDS - (time.monotonic() - started)))

    def lateness(self) -> dict[str, float]:
        """Per source, seconds from becoming due to the end of the first run that ended
        after that (inf: none yet). A run already going when the source became due
        counts (0 s late) when it ends well: its last write sets the next fetch, with
        what the feed had a moment before."""
        runs: dict[str, list[tuple[int, int]]] = {}
        for run, sid, finished in query(
                self.url, "SELECT id, source_id, finished_at FROM fetch_runs "
                          "WHERE outcome NOT IN ('running', 'abandoned')"):
            runs.setdefault(str(sid), []).append((int(str(run)), int(str(finished))))
        out = {}
        for sid, due in self.due.items():
            going = self.going.get(sid, set())
            ends = [max(f, _us(due)) for run, f in runs.get(sid, [])
                    if f >= _us(due) or run in going]
            out[sid] = (min(ends) - _us(due)) / 1e6 if ends else float("inf")
        return out

    def settled(self) -> bool:
        waiting = [sid for sid, late in self.lateness().items() if late == float("inf")]
        orphans = self.orphans()
        self.last_check = f"not collected yet: {waiting[:10]}, orphaned jobs: {orphans}; " + \
            "; ".join(self.story(sid) for sid in waiting[:3])
        return not waiting and orphans == 0

    def story(self, sid: str) -> str:
        """What the test did to a source and what the archive and the queue hold."""
        nxt = query(self.url, f"SELECT next_fetch_at FROM sources WHERE id = '{sid}'")
        runs = query(self.url, "SELECT started_at, finished_at, outcome FROM fetch_runs "
                               f"WHERE source_id = '{sid}' ORDER BY started_at")
        jobs = query(self.url, "SELECT id, status FROM procrastinate_jobs "
                               f"WHERE args->>'source_id' = '{sid}'")
        return (f"{sid}: {self.events.get(sid)}, next fetch {nxt}, runs {runs}, "
                f"jobs {jobs}")

    def orphans(self) -> int:
        """Jobs still marked doing by a worker that is gone."""
        return int(str(query(self.url, f"""SELECT count(*) FROM procrastinate_jobs j
            WHERE j.status = 'doing' AND NOT EXISTS (SELECT 1 FROM procrastinate_workers w
              WHERE w.id = j.worker_id
              AND w.last_heartbeat > now() - interval '{STALLED_AFTER} seconds')""")[0][0]))


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.timeout(600)
def test_workers_killed_again_and_again_never_stop_the_cluster(tmp_path: Path) -> None:
    url = pgserver.schema_url()
    with running_farm(SlowFarm(feeds=FIRST + 4 * ROUNDS, per_feed=3)) as farm:
        feeds = [f"{farm.base}/feeds/{s.index}.xml" for s in farm.specs]
        env = worker_env(url, tmp_path / "data")
        tidings = Tidings.open(load_settings(tmp_path / "data", env=env), create=True)
        chaos = Chaos(url, tmp_path, env, tidings, feeds)
        ensure_queue_schema(url)
        try:
            chaos.add(feeds[:FIRST])
            for _ in range(3):
                chaos.start()
            for n in range(ROUNDS):
                chaos.round(n)
            chaos.make_due(chaos.pushed)
            last = time.monotonic()
            wait_for(chaos.settled, LATE + 30 - (time.monotonic() - last),
                     "every source collected", chaos.logs, lambda: chaos.last_check)
        finally:
            for w in chaos.alive():
                w.send_signal(signal.SIGTERM)
            for w in chaos.workers:
                try:
                    w.wait(60)
                except subprocess.TimeoutExpired:
                    w.kill()
            asyncio.run(tidings.aclose())
    late = chaos.lateness()
    assert len(late) == FIRST + 4 * ROUNDS
    assert max(late.values()) < LATE, sorted(late.items(), key=lambda kv: -kv[1])[:5]
    urls = [str(r[0]) for r in query(url, "SELECT url FROM items")]
    assert urls and len(urls) == len(set(urls)), "an item was stored twice"
    assert farm.most_at_once == 1, "a feed was fetched twice at the same time"
    assert query(url, "SELECT count(*) FROM fetch_runs WHERE outcome = 'running'") == [(0,)]
    assert query(url, "SELECT count(*) FROM procrastinate_jobs WHERE status = 'doing'"
                 ) == [(0,)]
    texts = [log.read_text() for log in chaos.logs]
    dropped = sum(int(n) for t in texts for n in re.findall(r"(\d+) dropped", t))
    assert dropped > 0, "no dead worker's job ever had a twin waiting: the case not made"
    assert not [t for t in texts if "Traceback" in t and "UniqueViolation" in t]
