"""A simulated week of paid accounts (issue 18): every post stored exactly once, the
calls the theory predicts, and no day's spend above its budget - through trouble."""

from __future__ import annotations

from datetime import timedelta

from paidweek import WeekPlan, run_week, week_faults
from tidings.settings import Settings

PLAN = WeekPlan(x_accounts=50, wx_accounts=12, days=3, tick_min=5, tight_cost=0.9,
                rotate_at=timedelta(days=2, hours=10), burst_at=timedelta(days=1, hours=9))


async def test_a_week_of_accounts_through_trouble(settings: Settings) -> None:
    """The issue's checks on a smaller world (the full one takes ~6 CPU minutes:
    ``benchmarks/paid.py --check`` runs it and reports the same checks)."""
    week = await run_week(settings, PLAN)
    assert week_faults(week, PLAN) == []
    assert week.stored and week.x_calls and week.wx_calls
