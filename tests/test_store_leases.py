"""Leases that name their holder: a dead holder's sources are taken over at once."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import psutil

from storage_contract import T0, at, source
from tidings.model import RunCounts, RunOutcome
from tidings.pipeline import holders
from tidings.store.base import SourceUpdate, Storage


def _dead_holder() -> holders.Holder:
    """A holder on this host whose process has ended (a real one, waited for)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    started = psutil.Process(proc.pid).create_time()
    proc.wait(10)
    return holders.Holder(holders.this_process().host, proc.pid, started)


def test_a_dead_holders_leases_are_taken_over_with_a_reason(storage: Storage) -> None:
    for name in ("a", "b", "done", "mine"):
        storage.add_source(source(name))
    dead = str(_dead_holder())
    claimed = storage.claim_due_sources(T0, 3, at(10), only=["a", "b", "done"], holder=dead)
    assert len(claimed) == 3
    storage.claim_due_sources(T0, 1, at(10), only=["mine"], holder=holders.lease_name())
    for name in ("a", "b", "done", "mine"):
        storage.start_run(name, T0)
    # "done" finished before its process died: its schedule is its own again
    storage.update_source("done", SourceUpdate(next_fetch_at=at(60)))
    storage.finish_run(storage.list_runs("done")[0].id, at(1), RunCounts(RunOutcome.OK))

    assert set(storage.lease_holders()) == {dead, holders.lease_name()}
    # `collect --all` names every source: one with a run left running is skipped ...
    assert storage.claim_due_sources(at(2), 10, at(12), only=["b"]) == []
    assert holders.recover(storage, at(2)) == 2  # ... until taken over: at once

    assert storage.get_source("a").next_fetch_at == at(2)
    assert storage.get_source("done").next_fetch_at == at(60)
    assert storage.get_source("mine").next_fetch_at == at(10)  # alive: still leased
    run = storage.list_runs("a")[0]
    assert run.outcome is RunOutcome.ABANDONED
    assert run.error is not None and run.error.startswith("abandoned: the collecting process")
    assert storage.list_runs("mine")[0].outcome is RunOutcome.RUNNING
    assert storage.lease_holders() == [holders.lease_name()]
    assert [s.id for s in storage.claim_due_sources(at(3), 10, at(13))] == ["a", "b"]
    assert [s.id for s in storage.claim_due_sources(at(3), 10, at(13), only=["done"])] == [
        "done"]


def test_a_reused_pid_is_not_the_holder(storage: Storage) -> None:
    """Same pid, another start time: the process that held the lease is gone."""
    me = holders.this_process()
    assert not holders.is_gone(me)
    assert holders.is_gone(holders.Holder(me.host, me.pid, me.started - 3600))
    assert not holders.is_gone(holders.Holder("another-host", 1, 0.0))  # cannot tell


def test_runs_left_running_long_ago_are_closed_with_a_reason(storage: Storage) -> None:
    storage.add_source(source("a"))
    storage.start_run("a", T0)  # no lease record: an older version, or another host
    holders.recover(storage, at(21))
    run = storage.list_runs("a")[0]
    assert run.outcome is RunOutcome.ABANDONED
    assert run.error == holders.STALE_REASON


def test_abandoned_and_running_runs_are_no_round(storage: Storage) -> None:
    """A process that stopped at once leaves abandoned runs behind (or runs still
    running): the last round is what finished."""
    for sid in ("a", "b", "c"):
        storage.add_source(source(sid))
    done = storage.start_run("a", T0)
    storage.finish_run(done, at(1), RunCounts(RunOutcome.OK, created=3))
    storage.start_run("b", at(2))
    storage.start_run("c", at(2))
    assert storage.abandon_stale_runs(at(3), at(4), reason="stopped") == 2
    storage.start_run("c", at(5))  # running now
    stats = storage.archive_stats()
    assert (stats.last_round_sources, stats.last_round_ok, stats.last_round_new_items) == (
        1, 1, 3)
    assert storage.list_runs("b")[0].error == "stopped"
    assert storage.abandon_stale_runs(at(9), at(9)) == 1
    assert storage.list_runs("c")[0].error is None  # no reason: no error text


def test_a_killed_but_unreaped_process_is_gone() -> None:
    """A zombie still has its pid and start time; it holds nothing any more."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = psutil.Process(proc.pid).create_time()
        holder = holders.Holder(holders.this_process().host, proc.pid, started)
        assert not holders.is_gone(holder)
        proc.send_signal(signal.SIGKILL)
        deadline = time.monotonic() + 10
        while psutil.Process(proc.pid).status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert holders.is_gone(holder)
    finally:
        proc.kill()
        proc.wait(10)
