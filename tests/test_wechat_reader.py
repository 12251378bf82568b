"""The wechat reader (R-WX-1..3) against a local fake of a Dajiala-style contract, with a
clock the test moves: windows, first checks, new posts by key, bodies and their retries."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from paidfakes import FakeClock, FakeDajiala, tidings_on
from tidings.app import ItemQuery, Tidings
from tidings.model import BodyState, Health, RunOutcome, SourceKind
from tidings.readers.wechat.posts import post_key
from tidings.readers.wechat.reader import window_of
from tidings.settings import Settings

START = datetime(2026, 3, 2, 8, 1, tzinfo=UTC)


@dataclass
class World:
    t: Tidings
    api: FakeDajiala
    clock: FakeClock

    async def add(self, *accounts: str) -> None:
        for a in accounts:
            await self.t.sources.create(f"wechat:{a}", kind=SourceKind("wechat"), source_id=a,
                                        config={"account": a})

    def calls(self, kind: str) -> int:
        return sum(1 for c in self.api.calls if c.path.endswith(kind))

    def items(self) -> dict[str, object]:
        return {i.title: i for i in self.t.items.query(ItemQuery(limit=1000))}


@pytest.fixture
async def world(settings: Settings) -> AsyncIterator[World]:
    clock = FakeClock(START)
    api = FakeDajiala(clock=clock.now)
    table = {"daily_cost": 50.0, "cost_per_call": 0.14}
    async with tidings_on(settings, api, clock, "dajiala", table) as t:
        yield World(t, api, clock)


def test_a_post_is_keyed_by_what_names_it_in_its_link() -> None:
    a = "https://mp.weixin.qq.com/s?__biz=MzA1&mid=22&idx=1&sn=x&chksm=y&scene=21"
    b = "https://mp.weixin.qq.com/s?__biz=MzA1&mid=22&idx=1&sn=x&chksm=z"
    assert post_key(a) == post_key(b) == "wx:MzA1:22:1"
    assert post_key("https://mp.weixin.qq.com/s/AbC-dEf") == "wx:AbC-dEf"


async def test_first_check_keeps_a_week_and_bodies_come_as_separate_calls(world: World) -> None:
    await world.add("aigc")
    world.api.publish("aigc", "ancient", START - timedelta(days=9))
    world.api.publish("aigc", "fresh", START - timedelta(days=2))
    report = await world.t.collection.round(extract=False)
    assert report.results["aigc"].created == 1
    fresh = world.t.items.query(ItemQuery(limit=10))[0]
    assert fresh.title == "fresh" and fresh.body_state is BodyState.OK
    assert "全文：fresh" in (fresh.body or "")
    assert (world.calls("post_history"), world.calls("article_detail")) == (1, 1)
    source = world.t.sources.get("aigc")
    assert source.cursor["balance"] == pytest.approx(1000 - 0.14 - 0.03)
    assert world.t.paid.today()["dajiala"].cost == pytest.approx(0.17), "the reported cost"
    assert not any("mp.weixin.qq.com" in c.path for c in world.api.calls)


async def test_one_list_call_per_account_per_window_even_for_a_manual_collect(
    world: World,
) -> None:
    await world.add("aigc")
    world.api.publish("aigc", "one", START - timedelta(hours=1))
    await world.t.collection.round(extract=False)
    world.clock.advance(3)  # same 10-minute window
    assert window_of(world.clock.at) == window_of(START)
    again = await world.t.collection.round(["aigc"], extract=False)
    assert again.results["aigc"].outcome is RunOutcome.OK
    assert world.calls("post_history") == 1, "the stored answer of the window is reused"
    world.clock.advance(10)
    world.api.publish("aigc", "two", world.clock.at - timedelta(minutes=1))
    await world.t.collection.round(["aigc"], extract=False)
    assert world.calls("post_history") == 2 and set(world.items()) == {"one", "two"}
    assert world.t.paid.calls("dajiala")[0].purpose.startswith("body")
    assert {c.purpose for c in world.t.paid.calls("dajiala")} >= {
        f"list:{window_of(START)}", f"list:{window_of(world.clock.at)}"}


async def test_at_most_eight_new_posts_per_run_and_newness_by_key(world: World) -> None:
    await world.add("busy")
    await world.t.collection.round(extract=False)
    world.clock.advance(120)  # a first check that found nothing: the silent cadence
    for n in range(10):
        world.api.publish("busy", f"post {n}", world.clock.at - timedelta(minutes=n + 1))
    first = await world.t.collection.round(extract=False)
    assert first.results["busy"].created == 8
    assert any("2 more new posts" in w for w in first.results["busy"].warnings)
    world.clock.advance(120)
    second = await world.t.collection.round(extract=False)
    assert second.results["busy"].created == 2 and len(world.items()) == 10
    assert world.calls("article_detail") == 10, "one body per new post, none twice"


async def test_a_body_that_fails_is_stored_without_and_retried_at_most_three_times(
    world: World,
) -> None:
    await world.add("flaky")
    await world.t.collection.round(extract=False)
    world.api.publish("flaky", "stubborn", world.clock.at - timedelta(minutes=1), body_fails=9)
    world.api.publish("flaky", "shy", world.clock.at - timedelta(minutes=2), body_fails=1)
    for _ in range(5):
        world.clock.advance(120)
        await world.t.collection.round(extract=False)
    items = world.items()
    assert items["shy"].body_state is BodyState.OK  # type: ignore[attr-defined]
    stubborn = items["stubborn"]
    assert stubborn.body_state is BodyState.PENDING  # type: ignore[attr-defined]
    tries = [c for c in world.api.calls if c.path.endswith("article_detail")
             and "mid=1&" in c.detail]
    assert len(tries) == 3, "three tries, then the post stays without its body"
    assert world.t.paid.troubles() == {}, "one post's 5xx is not the provider's trouble"
    assert stubborn.raw["body_tries"] == 1  # type: ignore[attr-defined]


async def test_body_tries_count_sent_calls_and_a_429_pause_holds_the_next_process(
    world: World,
) -> None:
    """R-WX-3 / issue 30 item 3: a body held back by the provider's pause is no try, and
    the pause is stored, so a second collect seconds later (another process: another
    ledger) sends nothing until it ends."""
    await world.add("acct")
    await world.t.collection.round(extract=False)
    posts = [world.api.publish("acct", f"post {n}", world.clock.at - timedelta(minutes=n + 1))
             for n in range(3)]
    world.api.body_status, world.api.retry_after = 429, "120"
    world.clock.advance(20)
    await world.t.collection.round(["acct"], extract=False)
    assert world.calls("article_detail") == 2, "two at once, both 429; the third held back"
    waiting = world.t.sources.get("acct").cursor["bodies"]
    assert sorted(w["tries"] for w in waiting) == [0, 1, 1], "only sent calls are tries"
    world.clock.advance(0.5)
    other = Tidings.open(world.t.settings, clock=world.clock.now)
    try:
        report = await other.collection.round(["acct"], extract=False)
        assert report.results["acct"].outcome is RunOutcome.OK
        assert world.calls("article_detail") == 2, "the stored pause holds this process back"
        assert sorted(w["tries"] for w in other.sources.get("acct").cursor["bodies"]) == [0, 1, 1]
        assert "rate limited (HTTP 429)" in other.paid.troubles()["dajiala"].reason
        world.api.body_status = None
        world.clock.advance(3)
        await other.collection.round(["acct"], extract=False)
    finally:
        await other.aclose()
    items = world.items()
    assert all(items[p.title].body_state is BodyState.OK for p in posts)  # type: ignore[attr-defined]
    for p in posts:
        sent = [c for c in world.api.calls if c.path.endswith("article_detail")
                and c.detail == p.url]
        tries = items[p.title].raw.get("body_tries", 0)  # type: ignore[attr-defined]
        assert len(sent) == tries + 1, "each try recorded is a call that was sent"
    assert world.t.paid.troubles() == {}, "the call that succeeded ended the trouble"


async def test_a_new_account_starts_at_15_minutes_and_its_first_check_sets_its_interval(
    world: World,
) -> None:
    await world.add("new", "quiet", "gone")
    world.api.gone.add("gone")
    for n in range(12):
        world.api.publish("new", f"recent {n}", world.clock.at - timedelta(hours=9 * n + 1))
    assert world.t.sources.get("new").interval_min == 15, "the reconcile interval (R-WX-1)"
    report = await world.t.collection.round(extract=False)
    assert report.results["new"].created == 8
    for sid in ("new", "quiet"):  # at most 8 new posts a run: never more than 8 / 7 a day
        source = world.t.sources.get(sid)
        assert source.interval_min == 120, "the interval the daily job would compute"
        assert source.next_fetch_at == world.clock.at + timedelta(minutes=120)
    assert world.t.sources.get("gone").interval_min == 15, "no good check yet: its own cadence"
    world.clock.advance(120)
    world.api.publish("quiet", "news", world.clock.at - timedelta(minutes=1))
    again = await world.t.collection.round(extract=False)
    assert again.results["quiet"].created == 1
    assert world.t.sources.get("quiet").interval_min == 120, "later checks wait for 04:20"


async def test_a_closed_account_fails_alone_and_says_why(world: World) -> None:
    await world.add("alive", "closed")
    world.api.gone.add("closed")
    report = await world.t.collection.round(extract=False)
    assert report.results["alive"].outcome is RunOutcome.OK
    closed = world.t.sources.get("closed")
    assert closed.fail_count == 1 and closed.health is Health.DEGRADED
    assert "cannot be read" in (closed.last_error or "") and "renamed" in (closed.last_error or "")


@pytest.mark.parametrize(("trouble", "reason"), [
    ("key", "API key …0001 refused (code 10002"),
    ("balance", "balance used up (code 20001"),
    ("down", "provider failing (HTTP 503)"),
    ("garbage", "not JSON"),
])
async def test_provider_trouble_is_one_budget_outcome_per_source_and_no_backoff(
    world: World, trouble: str, reason: str,
) -> None:
    await world.add("a", "b")
    if trouble == "key":
        world.api.keys = {"rotated"}
    elif trouble == "balance":
        world.api.money = 0.05
    else:
        setattr(world.api, trouble, True)
    report = await world.t.collection.round(extract=False)
    for sid in ("a", "b"):
        assert report.results[sid].outcome is RunOutcome.BUDGET
        assert reason in (report.results[sid].error or "")
        assert world.t.sources.get(sid).fail_count == 0
    assert list(world.t.paid.troubles()) == ["dajiala"]


async def test_at_most_two_calls_to_the_provider_at_once(world: World) -> None:
    accounts = [f"acct{n}" for n in range(6)]
    await world.add(*accounts)
    for a in accounts:
        world.api.publish(a, f"post of {a}", START - timedelta(hours=1))
    world.api.delay = 0.05
    report = await world.t.collection.round(extract=False)
    assert report.created == 6 and world.calls("post_history") == 6
    assert world.api.most_at_once == 2
