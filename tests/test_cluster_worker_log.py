"""`tidings worker` says what it does (issue 30): a start line, each round as `serve`
tells it, failures, and the stop on SIGTERM; a real worker process without ``-v``."""

from __future__ import annotations

import asyncio
import re
import signal
from pathlib import Path

import pytest

import pgserver
from clusterkit import start_worker, wait_for, worker_env
from farm import Farm, running_farm
from tidings.app import Tidings
from tidings.settings import load_settings

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def test_a_worker_logs_its_start_its_rounds_a_failure_and_its_stop(tmp_path: Path) -> None:
    url = pgserver.schema_url()
    with running_farm(Farm(feeds=8, per_feed=2)) as farm:  # feed 7 answers 404
        env = worker_env(url, tmp_path / "data")
        tidings = Tidings.open(load_settings(tmp_path / "data", env=env), create=True)
        try:
            asyncio.run(tidings.transfer.import_opml(farm.opml()))
            failing = next(s.id for s in tidings.sources.all() if s.url.endswith("/7.xml"))
        finally:
            asyncio.run(tidings.aclose())
        log = tmp_path / "worker.log"
        worker = start_worker(env, log, concurrency=4, verbose=False)
        try:
            def rounds() -> list[tuple[int, int]]:
                return [(int(ok), int(n)) for ok, n in
                        re.findall(r"round: (\d+) of (\d+) sources? ok", log.read_text())]

            wait_for(lambda: sum(n for _, n in rounds()) >= 8, 120, "the rounds", [log])
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(60)
    text = log.read_text()
    assert worker.returncode == 0, text[-2000:]
    start = re.search(r"worker \S+ started: database (\S+), queues collect, jobs, "
                      r"concurrency 4, 1 writer thread", text)
    assert start is not None, text[:2000]
    assert start.group(1) == url.split("?")[0]  # no password, no options
    assert rounds() and sum(n for _, n in rounds()) == 8 and sum(k for k, _ in rounds()) == 7
    failed = [line for line in text.splitlines() if "failed: " in line]
    assert len(failed) == 1 and "WARNING" in failed[0] and f"{failing} (" in failed[0]
    assert "worker stopping on SIGTERM: running jobs get up to" in text
    assert re.search(r"worker \S+ stopped on SIGTERM: 8 source runs in all", text)
    assert "procrastinate" not in text  # the queue's own chatter stays behind -v
