"""Paid API calls and cost per 1,000 posts stored: tidings against a naive reader.

Runs the simulated week of ``tests/paidweek.py`` (500 X accounts, 200 WeChat
accounts, a daily posting pattern, an outage, a key rotation, a tight budget day,
a burst needing backlog pages) twice in one process, on a fake clock against
the local fakes of SocialData and a Dajiala-style API:

* tidings: 24 accounts per search with watermarks, one WeChat list per account
  per 10-minute window, adaptive intervals for paid lists (R-SCHED-5);
* naive: one search per account per run, one list call per account per run at the
  15-minute reconcile, no adaptive intervals (neither the daily recomputation nor
  the interval a paid account's first check sets; the readers otherwise the same).

Prints calls and cost per 1,000 posts stored for both and the ratio of calls
(target: tidings at most a tenth of the naive reader's). The ratio runs have no
budgets, so that both sides store the same posts. ``--check`` runs tidings alone
through the week the issue describes, budgets and a tight day included, and
reports the checks tests/test_paid_week.py asserts on a smaller world.

    .venv/bin/python benchmarks/paid.py [--days 7] [--x 500] [--wechat 200]
                                        [--side both|tidings|naive] [--check]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

# the fakes of the paid APIs and the week live with the tests (they are test servers)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from paidweek import WeekPlan, WeekResult, run_week, week_faults
from tidings.model import SourceKind
from tidings.readers import register
from tidings.readers.wechat.reader import WechatReader
from tidings.readers.x.reader import XReader
from tidings.settings import load_settings


class NaiveX(XReader):
    """One search per account: never batched."""

    def batch_key(self, source: Any, config: Any) -> str | None:
        return None


class NaiveWechat(WechatReader):
    """A list call every run: the window's stored answer is never reused."""

    async def _list(self, run: Any) -> Any:
        cursor = {k: v for k, v in run.ctx.source.cursor.items() if k != "list"}
        run.ctx = replace(run.ctx, source=replace(run.ctx.source, cursor=cursor))
        return await super()._list(run)


def per_thousand(week: WeekResult) -> tuple[float, float]:
    stored = max(1, len(set(week.stored)))
    return week.calls * 1000 / stored, week.cost * 1000 / stored


async def one(plan: WeekPlan, naive: bool) -> tuple[WeekResult, float]:
    register(SourceKind("x"), NaiveX if naive else XReader)
    register(SourceKind("wechat"), NaiveWechat if naive else WechatReader)
    # calls are measured here, not the disk: an archive in memory when there is one
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as tmp:
        settings = load_settings(Path(tmp) / "data", env={}, overrides={
            "allow_private_hosts": "127.0.0.1", "per_host_delay": 0,
            "per_host_concurrency": 8, "collect_concurrency": 16})
        started = time.perf_counter()
        per_day = 6 * 60 // plan.tick_min  # a line every simulated 6 hours

        def day_done(tick: int, total: int, calls: int) -> None:
            if tick % per_day == 0:
                print(f"  {'naive' if naive else 'tidings'}: {tick // per_day * 6} h of "
                      f"{total // per_day * 6}, {calls} paid calls "
                      f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)

        week = await run_week(settings, plan, naive=naive, progress=day_done)
        return week, time.perf_counter() - started


def show(name: str, week: WeekResult, secs: float) -> None:
    calls, cost = per_thousand(week)
    print(f"{name:8} stored {len(set(week.stored)):7d} posts  calls {week.calls:7d} "
          f"(X {week.x_calls}, WeChat {week.wx_calls})  per 1,000 posts: "
          f"{calls:8.1f} calls, cost {cost:8.3f}  ({secs:.0f} s)", flush=True)


def check(plan: WeekPlan) -> None:
    week, secs = asyncio.run(one(plan, naive=False))
    show("tidings", week, secs)
    faults = week_faults(week, plan)
    print(f"checks (each post stored once, none missing, X searches = theory, one WeChat "
          f"list per account and window, no day over budget, the tight day ran out): "
          f"{'all hold' if not faults else '; '.join(faults)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--x", type=int, default=500)
    parser.add_argument("--wechat", type=int, default=200)
    parser.add_argument("--side", choices=("both", "tidings", "naive"), default="both",
                        help="run one side only (each is deterministic in its calls, so two "
                             "processes side by side give the same ratio on a busy machine)")
    parser.add_argument("--check", action="store_true",
                        help="tidings alone with the week's budgets: report the issue's checks")
    args = parser.parse_args()
    if args.check:
        check(WeekPlan(x_accounts=args.x, wx_accounts=args.wechat, days=args.days))
        return
    plan = WeekPlan(x_accounts=args.x, wx_accounts=args.wechat, days=args.days,
                    x_daily_calls=10**7, wx_daily_cost=10**6, tight_day=args.days + 1)
    if args.side != "both":
        week, secs = asyncio.run(one(plan, naive=args.side == "naive"))
        show(args.side, week, secs)
        return
    ours, ours_s = asyncio.run(one(plan, naive=False))
    show("tidings", ours, ours_s)
    naive, naive_s = asyncio.run(one(plan, naive=True))
    show("naive", naive, naive_s)
    ratio = per_thousand(ours)[0] / per_thousand(naive)[0]
    print(f"calls per 1,000 posts, tidings / naive: {ratio:.3f} (target <= 0.100)")


if __name__ == "__main__":
    main()
