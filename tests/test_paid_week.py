"""A simulated week of paid accounts (issue 18): every post stored exactly once, the
calls the theory predicts, and no day's spend above its budget - through trouble."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from paidweek import WeekPlan, run_week
from tidings.settings import Settings

PLAN = WeekPlan(x_accounts=50, wx_accounts=12, days=3, tick_min=5, tight_cost=0.9,
                rotate_at=timedelta(days=2, hours=10), burst_at=timedelta(days=1, hours=9))


async def test_a_week_of_accounts_through_trouble(settings: Settings) -> None:
    week = await run_week(settings, PLAN)
    counts = Counter(week.stored)
    assert not [k for k, n in counts.items() if n > 1], "stored exactly once"
    missing = week.published - set(counts)
    assert not missing, f"{len(missing)} published posts never stored: {sorted(missing)[:5]}"
    # X: the first check of each account, then ceil(accounts / 24) searches per round
    assert week.x_first_pages == week.x_theory
    rounds = PLAN.days * 24 * 2  # the 30-minute batch cadence
    assert week.x_first_pages - PLAN.x_accounts <= rounds * 3 + 12, "batches stay together"
    print(f"x first pages {week.x_first_pages}, all X calls {week.x_calls}, "
          f"wechat calls {week.wx_calls}, stored {len(week.stored)}")
    # WeChat: never two list calls for one account in one window
    assert max(Counter(week.wx_lists).values()) == 1
    for day, used in week.spend_by_day.items():
        calls_cap, _ = week.budgets.get(day, {}).get("socialdata", (None, None))
        _, cost_cap = week.budgets.get(day, {}).get("dajiala", (None, None))
        x_calls = used.get("socialdata", (0, 0.0))[0]
        wx_cost = used.get("dajiala", (0, 0.0))[1]
        assert calls_cap is None or x_calls <= calls_cap, day
        assert cost_cap is None or wx_cost <= cost_cap + 1e-9, day
    tight = sorted(week.spend_by_day)[PLAN.tight_day]
    assert week.spend_by_day[tight]["dajiala"][1] > PLAN.tight_cost - 0.2, "ran out mid-day"
