"""The pure scheduling rules on a fake clock: SPEC section 5, R-SCHED-1/3/4/5, R-RSS-7."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from tidings.errors import ConfigError
from tidings.model import CostClass, Health, Source, SourceKind
from tidings.pipeline import timing
from tidings.schedule import plan

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)  # a Monday


def src(sid: str, *, due_min_ago: float | None = 0, priority: int = 0, muted: str | None = None,
        kind: str = "rss", cost: CostClass = CostClass.FREE,
        interval: int = 30, config: dict[str, object] | None = None) -> Source:
    nxt = None if due_min_ago is None else NOW - timedelta(minutes=due_min_ago)
    return Source(id=sid, kind=SourceKind(kind), url=f"https://{sid}.example/feed",
                  next_fetch_at=nxt,
                  priority=priority, muted_reason=muted, cost_class=cost,
                  interval_min=interval, config=config or {})


# ---------------------------------------------------------------- backoff (section 5)


@pytest.mark.parametrize(("interval", "fail_count", "expected"), [
    (30, 0, 60), (30, 1, 90), (30, 4, 180), (30, 10, 360), (30, 100, 360),
    (15, 0, 30), (60, 4, 360), (60, 3, 300), (120, 1, 360), (360, 0, 360),
])
def test_backoff_is_interval_times_fail_count_plus_two_capped(
    interval: int, fail_count: int, expected: int,
) -> None:
    assert timing.backoff_minutes(interval, fail_count) == expected
    assert timing.next_after_failure(NOW, interval, fail_count) == NOW + timedelta(
        minutes=expected)


def test_backoff_sequence_of_a_dead_source_stays_at_the_cap_forever() -> None:
    """R-SCHED-4: a failing source keeps being tried at the capped backoff, never dropped."""
    now, fail_count, gaps = NOW, 0, []
    for _ in range(12):
        nxt = timing.next_after_failure(now, 30, fail_count)
        gaps.append(int((nxt - now).total_seconds() // 60))
        now, fail_count = nxt, fail_count + 1
    assert gaps == [60, 90, 120, 150, 180, 210, 240, 270, 300, 330, 360, 360]


def test_retry_after_pushes_a_failure_later_but_never_earlier() -> None:
    later = NOW + timedelta(hours=5)
    assert timing.next_after_failure(NOW, 30, 0, retry_after=later) == later
    sooner = NOW + timedelta(minutes=5)
    assert timing.next_after_failure(NOW, 30, 0, retry_after=sooner) == NOW + timedelta(
        minutes=60)


def test_budget_failure_retries_in_fifteen_minutes() -> None:
    """R-SCHED-3: our own budget is not the source's fault (fail_count is not an input)."""
    assert timing.next_after_budget(NOW) == NOW + timedelta(minutes=15)


@pytest.mark.parametrize(("fail_count", "health"), [
    (0, Health.OK), (1, Health.DEGRADED), (2, Health.DEGRADED), (4, Health.DEGRADED),
    (5, Health.FAILING), (6, Health.FAILING), (50, Health.FAILING),
])
def test_health_transitions_at_one_and_five_failures(fail_count: int, health: Health) -> None:
    assert timing.health_for(fail_count) is health


def test_lease_is_ten_minutes() -> None:
    assert timing.lease_until(NOW) == NOW + timedelta(minutes=10)


# ----------------------------------------------------------- caching hints (R-RSS-7)


def test_hints_only_push_later_than_the_interval() -> None:
    """The reader turns TTL / max-age / Expires into not_before; it can only delay."""
    soon = NOW + timedelta(minutes=1)
    assert timing.next_after_success(NOW, 30, soon) == NOW + timedelta(minutes=30)
    late = NOW + timedelta(hours=2)
    assert timing.next_after_success(NOW, 30, late) == late
    assert timing.next_after_success(NOW, 30, None) == NOW + timedelta(minutes=30)


# --------------------------------------------------------------- due picking (R-SCHED-1)


def test_longest_overdue_first_and_at_most_forty() -> None:
    sources = [src(f"s{i:03d}", due_min_ago=i) for i in range(100)]
    picked = plan.pick_due(sources, NOW)
    assert len(picked) == plan.MAX_PER_TICK == 40
    assert [s.id for s in picked] == [f"s{i:03d}" for i in range(99, 59, -1)]


def test_not_due_and_muted_sources_are_never_picked() -> None:
    sources = [src("future", due_min_ago=-1), src("muted", muted="410 Gone"),
               src("now", due_min_ago=0), src("never", due_min_ago=None)]
    assert [s.id for s in plan.pick_due(sources, NOW)] == ["never", "now"]


def test_ties_break_by_priority_then_id() -> None:
    sources = [src("b"), src("a"), src("c", priority=1)]
    assert [s.id for s in plan.pick_due(sources, NOW)] == ["c", "a", "b"]
    assert [s.id for s in plan.pick_due(sources, NOW, limit=1)] == ["c"]


def test_a_starred_source_gets_in_when_the_tick_is_full() -> None:
    sources = [src(f"s{i:02d}", due_min_ago=60 + i) for i in range(45)]
    sources.append(src("starred", due_min_ago=1, priority=5))
    picked = [s.id for s in plan.pick_due(sources, NOW)]
    assert picked[-1] == "starred"  # chosen first, started last: it is the least overdue
    assert len(picked) == 40
    assert "s00" not in picked  # the least overdue ordinary sources wait a tick


def test_priority_never_makes_a_source_run_early() -> None:
    assert plan.pick_due([src("starred", due_min_ago=-5, priority=9)], NOW) == []


@pytest.mark.parametrize(("in_flight", "concurrency", "expected"), [
    (0, 64, 40), (30, 64, 34), (64, 64, 0), (70, 64, 0), (0, 10, 10),
])
def test_tick_capacity_never_exceeds_free_slots(
    in_flight: int, concurrency: int, expected: int,
) -> None:
    assert plan.tick_capacity(in_flight, concurrency) == expected


# -------------------------------------------------------- adaptive intervals (R-SCHED-5)


@pytest.mark.parametrize(("cost", "per_day", "expected"), [
    (CostClass.FREE, 0, 60), (CostClass.FREE, 1, 60), (CostClass.FREE, 8, 60),
    (CostClass.FREE, 10, 48), (CostClass.FREE, 24, 20), (CostClass.FREE, 100, 15),
    (CostClass.PAID_LIST, 0, 120), (CostClass.PAID_LIST, 2, 120),
    (CostClass.PAID_LIST, 5, 96), (CostClass.PAID_LIST, 1000, 15),
    (CostClass.PAID_RENDER, 0, 120), (CostClass.PAID_RENDER, 6, 80),
    (CostClass.PAID_RENDER, 100, 60),
    (CostClass.HOT_SIGNAL, 0, 180), (CostClass.HOT_SIGNAL, 2, 180),
    (CostClass.HOT_SIGNAL, 4, 120), (CostClass.HOT_SIGNAL, 500, 15),
])
def test_adaptive_interval_clamps_by_cost_class(
    cost: CostClass, per_day: float, expected: int,
) -> None:
    assert timing.adaptive_interval(cost, per_day) == expected


@pytest.mark.parametrize("cost", list(CostClass))
@pytest.mark.parametrize("per_day", [0.0, 0.01, 0.5, 3.3, 7.0, 48.0, 1e6, float("inf")])
def test_adaptive_interval_always_within_the_class_bounds(cost: CostClass, per_day: float) -> None:
    clamp = timing.COST_CLAMPS[cost]
    assert clamp.low <= timing.adaptive_interval(cost, per_day) <= clamp.high


def test_batched_x_sources_follow_the_batch_cadence() -> None:
    assert timing.adaptive_interval(CostClass.PAID_LIST, 500, batched=True) == 30
    assert timing.adaptive_interval(CostClass.HOT_SIGNAL, 0, batched=True) == 60
    watermark = {"since_id": "1759640213937398180"}
    x1 = src("x1", kind="x", config={"handle": "x1"})
    assert timing.is_batched(replace(x1, cursor=watermark))
    assert not timing.is_batched(x1), "a first check goes alone"
    assert not timing.is_batched(replace(src("x3", kind="x", config={"batch": "ai"}),
                                         cursor=watermark)), "a config that fails runs alone"
    assert not timing.is_batched(replace(src("r"), cursor=watermark))


def test_a_paid_list_first_check_sets_the_interval_the_daily_job_would() -> None:
    wechat = src("wx", kind=SourceKind("wechat"), cost=CostClass.PAID_LIST, interval=15)
    assert timing.first_check_interval(wechat, 0) == 120, "nothing lately: the upper bound"
    assert timing.first_check_interval(wechat, 7) == 120, "a post a day"
    assert timing.first_check_interval(wechat, 35) == 96, "5 a day, as the daily job says"
    assert timing.first_check_interval(wechat, 7 * 1000) == 15
    watermark = {"since_id": "1759640213937398180"}
    x = replace(src("x1", kind="x", cost=CostClass.PAID_LIST, config={"handle": "x1"}),
                cursor=watermark)
    assert timing.first_check_interval(x, 3) == 30, "a batched account follows its batch"
    assert timing.first_check_interval(replace(wechat, last_success_at=NOW), 0) is None
    assert timing.first_check_interval(src("feed", interval=15), 0) is None, "free: daily"


def test_mean_per_day_counts_missing_days_as_zero() -> None:
    assert plan.mean_per_day([7]) == 1.0
    assert plan.mean_per_day([0, 0, 0, 0, 0, 0, 0, 70]) == 10.0  # only the last 7 count
    with pytest.raises(ConfigError):
        plan.mean_per_day([1], days=0)


def test_plan_intervals_returns_only_changes() -> None:
    sources = [src("busy", interval=60), src("quiet", interval=60),
               src("hot", cost=CostClass.HOT_SIGNAL, interval=30)]
    counts = {"busy": [24] * 7, "quiet": [1] * 7}
    assert plan.plan_intervals(sources, counts) == {"busy": 20, "hot": 180}


# ------------------------------------------------------------------- wall-clock jobs


def test_next_daily_at_0420_local() -> None:
    shanghai = ZoneInfo("Asia/Shanghai")
    # 12:00 UTC is 20:00 in Shanghai: the next 04:20 there is 20:20 UTC the same day
    assert plan.next_daily(NOW, plan.ADAPT_AT, shanghai) == datetime(
        2026, 3, 2, 20, 20, tzinfo=UTC)
    at = datetime(2026, 3, 2, 20, 20, tzinfo=UTC)
    assert plan.next_daily(at, plan.ADAPT_AT, shanghai) == at + timedelta(days=1)
    assert plan.next_daily(at - timedelta(seconds=1), plan.ADAPT_AT, shanghai) == at


def test_next_daily_across_a_dst_change() -> None:
    berlin = ZoneInfo("Europe/Berlin")  # clocks go forward on 2026-03-29
    before = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)
    assert plan.next_daily(before, time(4, 20), berlin) == datetime(
        2026, 3, 29, 2, 20, tzinfo=UTC)
    assert plan.next_daily(before - timedelta(days=1), time(4, 20), berlin) == datetime(
        2026, 3, 28, 3, 20, tzinfo=UTC)


def test_next_weekly_is_monday_morning() -> None:
    assert plan.next_weekly(NOW, 0, time(9, 0), UTC) == NOW + timedelta(days=7, hours=-3)
    sunday = datetime(2026, 3, 8, 23, 0, tzinfo=UTC)
    assert plan.next_weekly(sunday, 0, time(9, 0), UTC) == datetime(2026, 3, 9, 9, 0, tzinfo=UTC)
    with pytest.raises(ConfigError):
        plan.next_weekly(NOW, 7, time(9, 0), UTC)


@pytest.mark.parametrize("text", ["4:20pm", "25:00", "", "04-20"])
def test_bad_times_of_day_are_config_errors(text: str) -> None:
    with pytest.raises(ConfigError):
        plan.parse_hhmm(text)
