"""A simulated week of X and WeChat accounts on the paid-API fakes, on a fake clock.

Shared by tests/test_paid_week.py (a small world, asserted) and benchmarks/paid.py
(500 X + 200 WeChat accounts, tidings against a naive reader). Nothing waits for
wall time: the clock jumps from tick to tick and each tick is one collection
round (``Tidings.collect``), plus the daily 04:20 interval recomputation.

The week has trouble in it: a burst of tweets that needs backlog pages, short-lived
search cursors, both providers down for an hour, the X key rotated (refused for
half an hour until the settings follow), and one day whose WeChat budget is too
small, so it runs out mid-day.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from math import exp, factorial
from typing import Any

from netservers import serve
from paidfakes import FakeClock, FakeDajiala, FakeSocialData
from tidings.app import ItemQuery, Tidings
from tidings.app.accounts import read_accounts
from tidings.pipeline import timing
from tidings.readers.wechat.posts import post_key
from tidings.schedule.jobs import adapt_intervals
from tidings.settings import Settings

MONDAY = datetime(2026, 3, 2, tzinfo=UTC)
#: told after each tick: ticks done, ticks in all, paid calls answered so far
Progress = Callable[[int, int, int], None]
X_PRICE = 0.0002 * 20  # about 20 tweets a page at SocialData's price per tweet
WX_LIST, WX_BODY = 0.14, 0.03


@dataclass(frozen=True)
class WeekPlan:
    x_accounts: int = 500
    wx_accounts: int = 200
    days: int = 7
    tick_min: int = 5
    tweets_per_day: float = 4.0
    posts_per_day: float = 1.0
    x_daily_calls: int = 20_000
    wx_daily_cost: float = 600.0  # 200 accounts need ~370 a normal day: room to spare
    tight_day: int = 2  # this day's WeChat budget is a third of the day's needs
    tight_cost: float = 10.0
    outage_at: timedelta = timedelta(days=1, hours=14)  # both providers down for an hour
    rotate_at: timedelta = timedelta(days=3, hours=10)  # the X key changes
    burst_at: timedelta = timedelta(days=4, hours=9)  # one account posts 260 tweets
    cursor_ttl: timedelta = timedelta(minutes=20)
    seed: int = 18


@dataclass
class WeekResult:
    stored: list[str] = field(default_factory=list)  # identity keys of the items stored
    published: set[str] = field(default_factory=set)  # keys the fakes published in time
    x_calls: int = 0  # paid calls answered by the X fake
    x_first_pages: int = 0  # answered searches without a cursor
    x_theory: int = 0  # first pages the theory predicts: first checks + ceil(ok / 24)
    wx_lists: list[tuple[str, int]] = field(default_factory=list)  # (account, window)
    wx_calls: int = 0
    cost: float = 0.0
    spend_by_day: dict[str, dict[str, tuple[int, float]]] = field(default_factory=dict)
    budgets: dict[str, dict[str, tuple[int | None, float | None]]] = field(
        default_factory=dict)

    @property
    def calls(self) -> int:
        return self.x_calls + self.wx_calls


def _daily_pattern(rng: random.Random, day: datetime, per_day: float) -> list[datetime]:
    """Post times of one account on one day: mostly 08:00-23:00, some at night."""
    count = rng.choices(range(12), weights=[_poisson(per_day, k) for k in range(12)])[0]
    out = []
    for _ in range(count):
        hour = rng.choice(range(8, 23)) if rng.random() < 0.85 else rng.choice(range(8))
        out.append(day + timedelta(hours=hour, minutes=rng.randrange(60),
                                   seconds=rng.randrange(60)))
    return out


def _poisson(mean: float, k: int) -> float:
    return exp(-mean) * mean ** k / factorial(k)


def publish_week(plan: WeekPlan, x: FakeSocialData, wx: FakeDajiala) -> None:
    rng = random.Random(plan.seed)
    for day in range(plan.days):
        start = MONDAY + timedelta(days=day)
        for n in range(plan.x_accounts):
            for at in _daily_pattern(rng, start, plan.tweets_per_day):
                x.publish(f"acct{n:04d}", f"tweet of acct{n:04d} at {at:%a %H:%M:%S}", at,
                          retweet=rng.random() < 0.05, reply=rng.random() < 0.1,
                          article=rng.random() < 0.01)
        for n in range(plan.wx_accounts):
            for at in _daily_pattern(rng, start, plan.posts_per_day):
                wx.publish(f"gh_{n:04d}", f"文章 {n} {at:%a %H:%M}", at,
                           body_fails=1 if rng.random() < 0.05 else 0)
    burst = MONDAY + plan.burst_at
    for k in range(260):
        x.publish("acct0001", f"burst {k}", burst + timedelta(seconds=10 * k))


def _providers(x_base: str, wx_base: str, plan: WeekPlan, x_key: str,
               wx_cost: float) -> dict[str, Any]:
    return {"socialdata": {"base_url": x_base, "api_key": x_key, "cost_per_call": X_PRICE,
                           "daily_calls": plan.x_daily_calls},
            "dajiala": {"base_url": wx_base, "api_key": "sk-test-0001",
                        "cost_per_call": WX_LIST, "daily_cost": wx_cost}}


async def run_week(settings: Settings, plan: WeekPlan, *, naive: bool = False,
                   progress: Progress | None = None) -> WeekResult:
    """Follow the plan's accounts for its days; ``naive`` reads as the naive peer does
    (one search per account, a list call per account per run, no adaptive cadence)."""
    adapting = timing.ADAPT_ON_FIRST_CHECK
    if naive:  # the naive peer keeps every account at its starting cadence
        timing.ADAPT_ON_FIRST_CHECK = frozenset()
    try:
        return await _run_week(settings, plan, naive, progress)
    finally:
        timing.ADAPT_ON_FIRST_CHECK = adapting


async def _run_week(settings: Settings, plan: WeekPlan, naive: bool,
                    progress: Progress | None) -> WeekResult:
    clock = FakeClock(MONDAY)
    x = FakeSocialData(clock=clock.now, cursor_ttl=plan.cursor_ttl)
    wx = FakeDajiala(clock=clock.now, money=1e9)
    publish_week(plan, x, wx)
    result = WeekResult()
    settings = replace(settings, timezone="UTC")
    async with serve(x.app()) as x_base, serve(wx.app()) as wx_base:
        def open_with(x_key: str, wx_cost: float) -> Tidings:
            t = Tidings.open(replace(settings, providers=_providers(
                x_base, wx_base, plan, x_key, wx_cost)), create=True, clock=clock.now)
            result.budgets.setdefault(clock.at.date().isoformat(), {}).update(
                socialdata=(plan.x_daily_calls, None), dajiala=(None, wx_cost))
            return t

        t = open_with("sk-test-0001", plan.wx_daily_cost)
        await _follow(t, plan)
        ticks = plan.days * 24 * 60 // plan.tick_min
        for tick in range(ticks):
            t = await _events(t, plan, clock, x, wx, open_with)
            if clock.at.hour == 4 and 20 <= clock.at.minute < 20 + plan.tick_min and not naive:
                await t.write(lambda unit: adapt_intervals(unit, clock.at))
            report = await t.collection.round(extract=False)
            ok = sum(1 for sid, c in report.results.items()
                     if sid.startswith("x-") and c.outcome == "ok")
            result.x_theory += ok if tick == 0 else -(-ok // 24)
            clock.advance(plan.tick_min)
            if progress is not None:
                progress(tick + 1, ticks, len(x.calls) + len(wx.calls))
        _collect_result(result, t, x, wx, plan)
        await t.aclose()
    return result


async def _follow(t: Tidings, plan: WeekPlan) -> None:
    """Every account added the way a person adds hundreds (``tidings import-accounts``)."""
    lines = [f"x:@acct{n:04d}" for n in range(plan.x_accounts)]
    lines += [f"wechat:gh_{n:04d}" for n in range(plan.wx_accounts)]
    added, present = await t.sources.import_accounts(read_accounts(lines))
    assert len(added) == len(lines) and not present


async def _events(t: Tidings, plan: WeekPlan, clock: FakeClock, x: FakeSocialData,
                  wx: FakeDajiala, open_with: Callable[[str, float], Tidings]) -> Tidings:
    """Trouble and settings changes due at this tick; returns the archive to go on with."""
    since = clock.at - MONDAY
    down = plan.outage_at <= since < plan.outage_at + timedelta(hours=1)
    x.down = wx.down = down
    tight = timedelta(days=plan.tight_day)
    reopen: tuple[str, float] | None = None
    key = "sk-test-0002" if since >= plan.rotate_at + timedelta(minutes=30) else "sk-test-0001"
    if since == plan.rotate_at:
        x.keys = {"sk-test-0002"}  # rotated at the provider: the old key is refused
    if since == plan.rotate_at + timedelta(minutes=30):
        reopen = (key, plan.wx_daily_cost)  # the settings follow half an hour later
    if since == tight:
        reopen = (key, plan.tight_cost)
    if since == tight + timedelta(days=1):
        reopen = (key, plan.wx_daily_cost)
    if reopen is None:
        return t
    await t.aclose()
    return open_with(*reopen)


def _collect_result(result: WeekResult, t: Tidings, x: FakeSocialData, wx: FakeDajiala,
                    plan: WeekPlan) -> None:
    end = MONDAY + timedelta(days=plan.days) - timedelta(hours=3)
    result.stored = [str(i.key) for i in t.items.query(ItemQuery(limit=10_000_000))]
    result.published = {f"x:{tw.id}" for tw in x.tweets
                        if tw.at <= end and not tw.reply and not tw.retweet}
    result.published |= {_wx_key(p.url) for p in wx.posts if p.at <= end}
    answered = [c for c in x.calls if c.status == 200]
    result.x_calls = len(x.calls)
    result.x_first_pages = sum(1 for c in answered
                               if c.path == "/twitter/search" and not c.cursor
                               and "max_id:" not in c.detail)
    result.wx_calls = len(wx.calls)
    result.wx_lists = [(c.detail, int(c.at.timestamp()) // 600) for c in wx.calls
                       if c.path.endswith("post_history") and c.status == 200]
    days = t.paid.by_day(plan.days + 1)
    result.spend_by_day = {day: {p: (s.calls, s.cost) for p, s in used.items()}
                           for day, used in days.items()}
    result.cost = sum(s.cost for used in days.values() for s in used.values())


def _wx_key(url: str) -> str:
    return post_key(url)


def week_faults(week: WeekResult, plan: WeekPlan) -> list[str]:
    """What the issue asks of a simulated week that this one broke (empty: nothing).

    Shared by tests/test_paid_week.py (a smaller world, asserted in the suite) and
    benchmarks/paid.py --check (the issue's full world, reported)."""
    faults = []
    counts = Counter(week.stored)
    twice = [k for k, n in counts.items() if n > 1]
    if twice:
        faults.append(f"{len(twice)} posts stored more than once: {sorted(twice)[:5]}")
    missing = week.published - set(counts)
    if missing:
        faults.append(f"{len(missing)} published posts never stored: {sorted(missing)[:5]}")
    # X: the first check of each account, then ceil(accounts / 24) searches per round
    if week.x_first_pages != week.x_theory:
        faults.append(f"X first pages {week.x_first_pages}, theory {week.x_theory}")
    rounds = plan.days * 24 * 2  # the 30-minute batch cadence
    searches = -(-plan.x_accounts // 24)  # a round's searches when every batch is whole
    if week.x_first_pages - plan.x_accounts > rounds * searches + 12:
        faults.append("X batches came apart")
    doubled = [k for k, n in Counter(week.wx_lists).items() if n > 1]
    if doubled:
        faults.append(f"two WeChat lists for one account in one window: {doubled[:5]}")
    for day, used in week.spend_by_day.items():
        calls_cap, _ = week.budgets.get(day, {}).get("socialdata", (None, None))
        _, cost_cap = week.budgets.get(day, {}).get("dajiala", (None, None))
        x_calls = used.get("socialdata", (0, 0.0))[0]
        wx_cost = used.get("dajiala", (0, 0.0))[1]
        if calls_cap is not None and x_calls > calls_cap:
            faults.append(f"{day}: {x_calls} X calls over a budget of {calls_cap}")
        if cost_cap is not None and wx_cost > cost_cap + 1e-9:
            faults.append(f"{day}: WeChat spend {wx_cost:.2f} over a budget of {cost_cap}")
    if plan.tight_day < plan.days:
        tight = sorted(week.spend_by_day)[plan.tight_day]
        if week.spend_by_day[tight]["dajiala"][1] <= plan.tight_cost - 0.2:
            faults.append(f"{tight}: the tight WeChat budget did not run out mid-day")
    return faults

