"""Where the CPU of a cluster round goes: the feed farm, PostgreSQL and the workers.

    .venv/bin/python benchmarks/cluster_cpu.py --workers 1 2 --repeat 3

Runs the rounds of benchmarks/cluster.py (the shared farm collected by N ``tidings
worker`` processes on a fresh PostgreSQL database) while sampling, every 0.2 s,
the CPU time (``/proc/<pid>/stat`` utime + stime) of the farm process, each worker
process and every PostgreSQL backend connected to the round's database
(``pg_stat_activity``). PostgreSQL's shared background processes (WAL writer,
checkpointer) are not counted: they serve every database on the server.

It prints, per worker count, the wall seconds, feeds/s and CPU milliseconds per
feed of each part, and from the first worker count's CPU figures the ceiling on
this machine with nothing else running: N workers collect at most
``min(N / worker_cpu, cores / all_cpu)`` feeds/s (a worker is one Python
process, at most one core; all parts share ``cores``), so the speed-up of N
workers over one can be no more than the ratio of those two bounds. CPU seconds
hardly depend on the load of the machine, the wall times do: on a shared
machine the ceiling is the honest figure, the measured ratio a noisy one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from cluster import TIDINGS, _finished, farm_archive
from collect import FarmProcess

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of ``pid`` (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / TICK


@dataclass
class Meter:
    """The latest CPU reading of each process of a part, minus its reading when the
    round started (a process born during the round counts from its birth)."""

    start: dict[int, float] = field(default_factory=dict)
    last: dict[int, float] = field(default_factory=dict)

    def sample(self, pids: list[int], baseline: bool = False) -> None:
        for pid in pids:
            now = cpu_seconds(pid)
            if now is None:
                continue
            self.start.setdefault(pid, now if baseline else 0.0)
            self.last[pid] = now

    def total(self) -> float:
        return sum(self.last[p] - self.start.get(p, 0.0) for p in self.last)


def _backends(url: str) -> list[int]:
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s "
                            "AND pid != pg_backend_pid()", (name,)).fetchall()
    return [int(r[0]) for r in rows]


def measured_round(farm: FarmProcess, workers: int, feeds: int, concurrency: int
                   ) -> tuple[float, dict[str, float]]:
    with farm_archive(farm, "tidings-cpu-") as (_, url, env):
        meters = {"farm": Meter(), "postgres": Meter(), "workers": Meter()}
        meters["farm"].sample([farm.proc.pid], baseline=True)
        meters["postgres"].sample(_backends(url), baseline=True)
        start = time.perf_counter()
        procs = [subprocess.Popen([*TIDINGS, "worker", "--concurrency", str(concurrency)],
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for _ in range(workers)]
        try:
            while _finished(url) < feeds:
                if time.perf_counter() - start > 600:
                    raise SystemExit(f"{workers} workers: round not done")
                meters["farm"].sample([farm.proc.pid])
                meters["workers"].sample([p.pid for p in procs])
                meters["postgres"].sample(_backends(url))
                time.sleep(0.2)
            seconds = time.perf_counter() - start
            meters["farm"].sample([farm.proc.pid])
            meters["workers"].sample([p.pid for p in procs])
            meters["postgres"].sample(_backends(url))
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        return seconds, {k: m.total() for k, m in meters.items()}


def ceiling(per_feed: dict[str, float], workers: int, cores: int) -> float:
    """Feeds/s that ``workers`` workers can reach at most with these CPU ms per feed."""
    return min(workers / per_feed["workers"], cores / sum(per_feed.values())) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--feeds", type=int, default=1000)
    ap.add_argument("--hosts", type=int, default=32)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    print(f"load {os.getloadavg()[0]:.1f} on {cores} cores", file=sys.stderr)
    farm = FarmProcess(args.feeds, args.hosts, "none")
    one = 0.0
    first: dict[str, float] = {}
    try:
        for n in args.workers:
            runs = []
            for _ in range(args.repeat):
                farm.reset()
                runs.append(measured_round(farm, n, args.feeds, args.concurrency))
                print(f"  {n} worker(s): {runs[-1][0]:.1f} s  " + "  ".join(
                    f"{k} {v:.1f} s" for k, v in runs[-1][1].items())
                    + f"  load {os.getloadavg()[0]:.1f}", flush=True)
            seconds = statistics.median(r[0] for r in runs)
            per_feed = {k: statistics.median(r[1][k] for r in runs) / args.feeds * 1000
                        for k in runs[0][1]}
            rate = args.feeds / seconds
            one = one or rate
            first = first or per_feed
            print(f"{n} worker(s): {rate:.1f} feeds/s (x{rate / one:.2f}), CPU ms per feed: "
                  + ", ".join(f"{k} {v:.1f}" for k, v in per_feed.items())
                  + f", all {sum(per_feed.values()):.1f}; ceiling from the first CPU "
                  f"figures x{ceiling(first, n, cores) / ceiling(first, 1, cores):.2f} "
                  "of one worker", flush=True)
    finally:
        farm.close()


if __name__ == "__main__":
    main()
