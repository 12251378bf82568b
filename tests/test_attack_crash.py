"""Crash campaign (issue 16): a real ``collect`` killed with SIGKILL at random moments.

Twenty times over a 200-feed farm on loopback, each process is killed at a
random moment (start-up, claiming, fetching, writing) and the next one starts at
once. With leases that named no holder, every kill froze the sources it had
claimed for ten minutes; now the next process takes them over. After the
twentieth kill one clean round runs. Pass: every item of the farm is there
(nothing stayed frozen), no URL twice, ``PRAGMA integrity_check`` ok, no run
left ``running``, no lease of a dead process left.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import psutil
from click.testing import CliRunner

from farm import Farm, running_farm
from tidings.cli import cli

KILLS = 20
SEED = int(os.environ.get("TIDINGS_CRASH_SEED", "16"))
ENV = {"TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1", "TIDINGS_PER_HOST_DELAY": "0",
       "TIDINGS_COLLECT_CONCURRENCY": "16", "TIDINGS_CPU_WORKERS": "2"}


def _cli(data: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env=ENV)
    assert result.exit_code == 0, result.output
    return result.output


def _kill_at(data: Path, delay: float) -> None:
    """Start ``collect --once`` and SIGKILL it (and wait for its workers) after ``delay``."""
    cmd = [sys.executable, "-m", "tidings", "--data", str(data), "collect", "--once"]
    proc = subprocess.Popen(cmd, env={**os.environ, **ENV}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(delay)
    try:
        helpers = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        helpers = []
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    _, alive = psutil.wait_procs(helpers, timeout=10)
    assert alive == [], "worker processes outlived the killed command"


def _facts(db: Path) -> dict[str, object]:
    with sqlite3.connect(db) as conn:
        urls = [r[0] for r in conn.execute("SELECT url FROM items")]
        return {
            "integrity": conn.execute("PRAGMA integrity_check").fetchone()[0],
            "urls": urls,
            "running": conn.execute(
                "SELECT count(*) FROM fetch_runs WHERE outcome = 'running'").fetchone()[0],
            "abandoned": conn.execute(
                "SELECT count(*) FROM fetch_runs WHERE outcome = 'abandoned'").fetchone()[0],
            # leases still holding a source (its next fetch is the lease time)
            "held": conn.execute(
                "SELECT count(*) FROM source_leases l JOIN sources s ON s.id = l.source_id "
                "WHERE s.next_fetch_at = l.until").fetchone()[0],
        }


def test_twenty_kill_9s_then_a_clean_round_loses_and_doubles_nothing(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    farm = Farm(feeds=200)
    with running_farm(farm):
        (tmp_path / "farm.opml").write_bytes(farm.opml())
        _cli(tmp_path, "init", "--empty")
        _cli(tmp_path, "import-opml", str(tmp_path / "farm.opml"))
        db = tmp_path / "tidings.sqlite3"
        started = time.monotonic()
        for _ in range(KILLS):
            _kill_at(tmp_path, rng.uniform(0.3, 1.8))
            with sqlite3.connect(db) as conn:
                assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        killing = time.monotonic() - started
        # the clean round, right after the last kill: exit 1 exactly when one of its
        # sources failed (the farm's broken feeds, if the kills left them due)
        result = CliRunner().invoke(cli, ["--data", str(tmp_path), "collect", "--once",
                                          "--json"], env=ENV)
        assert result.exit_code == (1 if json.loads(result.output)["failed"] else 0), (
            result.output)
        facts = _facts(db)
    urls = facts["urls"]
    assert isinstance(urls, list)
    assert facts["integrity"] == "ok"
    assert len(urls) == len(set(urls)), "duplicates"
    assert {urlsplit(u).path for u in urls} == farm.unique_paths(), "items missing: frozen"
    assert facts["running"] == 0
    assert facts["held"] == 0
    print(f"crash campaign: {KILLS} kill -9s in {killing:.1f} s (seed {SEED}), "
          f"{facts['abandoned']} runs closed as abandoned, {len(urls)} items, 0 duplicates")
