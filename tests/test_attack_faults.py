"""Fault campaign (issue 16): one round over a hostile publisher, in a real subprocess.

Every route of attack_faults.py is a source. Pass: the round completes, every
source has its expected outcome, every failure has a one-line reason saying
what went wrong, nothing leaked from ``file:///etc/passwd``, a 429's absurd
Retry-After pushes its source one day at most, and the collecting process
(with its parsing workers) peaked below 300 MB.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

from click.testing import CliRunner

from attack_faults import FAULTS, fault_app, fault_opml
from farm import serve_app
from tidings.cli import cli

PEAK_MB = 300
#: the budget is long enough for a loaded machine to read the 8 MiB cap of the
#: fifty-mb route, and shorter than the hang and drip routes
ENV = {"TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1", "TIDINGS_PER_HOST_DELAY": "0",
       "TIDINGS_PER_HOST_CONCURRENCY": "8", "TIDINGS_HTTP_TIMEOUT": "8",
       "TIDINGS_HTTP_MAX_REDIRECTS": "5"}
#: runs the CLI, then reports the peak resident size of itself and its workers (KiB).
#: Its own is VmHWM (the peak of this program's memory): ru_maxrss would also count
#: the test process it was forked from, before the exec.
_MEASURED = (
    "import atexit, re, resource, runpy, sys\n"
    "def peak():\n"
    "    status = open('/proc/self/status').read()\n"
    "    own = int(re.search(r'VmHWM:\\s+(\\d+)', status).group(1))\n"
    "    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "    print(f'PEAK_KIB {max(own, kids)} own {own} workers {kids}', file=sys.stderr)\n"
    "atexit.register(peak)\n"
    "sys.argv = ['tidings', *sys.argv[1:]]\n"
    "runpy.run_module('tidings', run_name='__main__')\n"
)


def _cli(data: Path, *args: str) -> None:
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env=ENV)
    assert result.exit_code == 0, result.output


def test_a_round_over_a_hostile_publisher_completes_in_bounded_memory(tmp_path: Path) -> None:
    with serve_app(fault_app()) as base:
        _cli(tmp_path, "init", "--empty")
        (tmp_path / "faults.opml").write_bytes(fault_opml(base))
        _cli(tmp_path, "import-opml", str(tmp_path / "faults.opml"))
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", _MEASURED, "--data", str(tmp_path), "collect", "--once",
             "--json"], capture_output=True, text=True, timeout=240,
            env={**os.environ, **ENV}, check=False)
        took = time.monotonic() - started
    assert done.returncode in (0, 1), done.stderr[-2000:]  # 1: some sources failed
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    peak_mb = int(done.stderr.rsplit("PEAK_KIB ", 1)[1].split()[0]) / 1024
    with sqlite3.connect(tmp_path / "tidings.sqlite3") as conn:
        runs = {r[0].rsplit("/", 1)[1]: (r[1], r[2] or "", r[3], r[4]) for r in conn.execute(
            "SELECT s.url, r.outcome, r.error, r.started_at, s.next_fetch_at "
            "FROM fetch_runs r JOIN sources s ON s.id = r.source_id")}
        titles = [r[0] for r in conn.execute("SELECT title FROM items")]
    assert set(runs) == set(FAULTS), report
    for name, (expected, words) in FAULTS.items():
        outcome, error, _, _ = runs[name]
        assert outcome == expected, (name, outcome, error)
        if outcome == "failed":
            assert error and "\n" not in error and len(error) < 400, (name, error)
            assert all(w in error for w in words), (name, error)
    assert not any("root:" in t for t in titles), "XXE read a local file"
    assert not any("hahahahaha" in t for t in titles), "entities were expanded"
    assert max(len(t) for t in titles) <= 1000  # the field limits held
    _, _, started_429, due_429 = runs["e429"]
    assert due_429 - started_429 <= timedelta(hours=24, minutes=1).total_seconds() * 1e6
    assert peak_mb < PEAK_MB, f"peak {peak_mb:.0f} MB"
    print(f"fault campaign: {len(FAULTS)} scenarios in {took:.1f} s, peak {peak_mb:.0f} MB, "
          f"{sum(1 for run in runs.values() if run[0] == 'failed')} one-line failures")
