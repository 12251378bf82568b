"""A day of a cluster, simulated: N sources on the adaptive intervals, W workers.

    .venv/bin/python benchmarks/scale_sim.py --sources 100000 --workers 1 2 4 8 16
    .venv/bin/python benchmarks/scale_sim.py --sources 1000000 --workers 16 32 64 \\
        --job-seconds 0.12

Sources get a publishing rate from a heavy-tailed distribution (most publish a few
items a day, a few hundred per day), a cost class, and their interval from
``tidings.pipeline.timing.adaptive_interval`` (the same function the daily job uses);
each is first due at a random minute. Minute by minute, due sources join the queue
(one job per source: a source already waiting is not queued again, as the queueing
lock does) and W workers take jobs at ``--job-seconds`` of worker time each (the
median CPU time of a collect job, measured by benchmarks/cluster.py: one worker's
seconds per feed). Printed per worker count: jobs per minute (mean and peak),
queue depth (mean, peak), how late jobs start (p50, p95, minutes), and the
database load (transactions and new items per second) the jobs cause. No network,
no database: a model, whose inputs are measured figures.
"""

from __future__ import annotations

import argparse
import heapq
import random
import statistics
from collections import deque
from dataclasses import dataclass

from tidings.model import CostClass
from tidings.pipeline.timing import adaptive_interval

MINUTES = 24 * 60
#: write transactions of one collect job: take (release + claim), start run,
#: the upsert batch, finish (run + source update); indexing adds one per 2,000 items
TXN_PER_JOB = 4
#: the share of sources per cost class (most feeds are free)
CLASSES = ((CostClass.FREE, 0.85), (CostClass.PAID_LIST, 0.05), (CostClass.PAID_RENDER, 0.02),
           (CostClass.HOT_SIGNAL, 0.08))


@dataclass(frozen=True, slots=True)
class Sim:
    source_interval: list[int]  # minutes
    source_rate: list[float]  # items per day


def make_sources(n: int, rng: random.Random) -> Sim:
    intervals, rates = [], []
    classes = [c for c, _ in CLASSES]
    weights = [w for _, w in CLASSES]
    for _ in range(n):
        per_day = min(500.0, rng.lognormvariate(0.7, 1.4))  # median ~2/day, tail to hundreds
        cost = rng.choices(classes, weights)[0]
        intervals.append(adaptive_interval(cost, per_day))
        rates.append(per_day)
    return Sim(intervals, rates)


@dataclass(slots=True)
class Result:
    workers: int
    jobs_per_min: list[int]
    depth: list[int]
    late: list[float]
    items_per_day: float


def simulate(sim: Sim, workers: int, job_seconds: float, rng: random.Random) -> Result:
    n = len(sim.source_interval)
    due: list[tuple[int, int]] = [(rng.randrange(sim.source_interval[i]), i) for i in range(n)]
    heapq.heapify(due)
    queue: deque[tuple[int, int]] = deque()  # (due minute, source)
    waiting: set[int] = set()
    capacity = workers * 60.0 / job_seconds  # jobs per minute
    credit = 0.0
    jobs, depth, late = [], [], []
    for minute in range(MINUTES):
        while due and due[0][0] <= minute:
            at, i = heapq.heappop(due)
            if i not in waiting:
                waiting.add(i)
                queue.append((at, i))
            heapq.heappush(due, (at + sim.source_interval[i], i))
        credit += capacity
        done = 0
        while queue and credit >= 1:
            at, i = queue.popleft()
            waiting.discard(i)
            credit -= 1
            done += 1
            late.append(float(minute - at))
        credit = min(credit, capacity)  # idle time is not saved up
        jobs.append(done)
        depth.append(len(queue))
    return Result(workers, jobs, depth, late, sum(sim.source_rate))


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] if ordered else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sources", type=int, default=100_000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    ap.add_argument("--job-seconds", type=float, default=0.12,
                    help="worker seconds per collect job (benchmarks/cluster.py)")
    args = ap.parse_args()
    rng = random.Random(7)
    sim = make_sources(args.sources, rng)
    per_day = sum(MINUTES / i for i in sim.source_interval)
    print(f"{args.sources:,} sources: {per_day:,.0f} fetches/day due "
          f"({per_day / MINUTES:,.0f}/min), {sum(sim.source_rate):,.0f} new items/day, "
          f"median interval {statistics.median(sim.source_interval)} min; "
          f"{args.job_seconds} worker-s per job")
    print(f"{'workers':>7} {'jobs/min':>9} {'peak':>6} {'queue':>8} {'peak':>7} "
          f"{'late p50':>9} {'p95 min':>8} {'txn/s':>7} {'items/s':>8}")
    for w in args.workers:
        r = simulate(sim, w, args.job_seconds, random.Random(11))
        mean_jobs = statistics.mean(r.jobs_per_min)
        print(f"{w:>7} {mean_jobs:>9,.0f} {max(r.jobs_per_min):>6,} "
              f"{statistics.mean(r.depth):>8,.0f} {max(r.depth):>7,} "
              f"{pct(r.late, 0.5):>9.0f} {pct(r.late, 0.95):>8.0f} "
              f"{mean_jobs * TXN_PER_JOB / 60:>7,.0f} {r.items_per_day / 86_400:>8,.1f}")
    need = per_day / MINUTES * args.job_seconds / 60
    print(f"workers needed to keep up (busy 100%): {need:.1f}; at 70% busy: {need / 0.7:.1f}")


if __name__ == "__main__":
    main()
