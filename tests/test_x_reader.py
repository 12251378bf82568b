"""The x reader (R-X-1..5) against a local fake of SocialData's contract, with a clock
the test moves: batching, watermarks, backlog segments, articles, provider trouble."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from paidfakes import FakeClock, FakeSocialData, tidings_on
from tidings.app import ItemQuery, Tidings
from tidings.model import BodyState, Health, RunOutcome, SourceKind
from tidings.readers.x import query as q
from tidings.settings import Settings

START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


@dataclass
class World:
    t: Tidings
    api: FakeSocialData
    clock: FakeClock

    async def add(self, *handles: str) -> None:
        for h in handles:
            await self.t.sources.create(f"https://x.com/{h}", kind=SourceKind("x"), source_id=h,
                                        config={"handle": h})

    def searches(self) -> list[str]:
        return [c.detail for c in self.api.calls if c.path == "/twitter/search"]

    async def followed(self, *handles: str) -> None:
        """The accounts added, checked once (a watermark each), and 30 minutes later."""
        await self.add(*handles)
        for h in handles:
            self.api.publish(h, "old", START - timedelta(days=1))
        await self.t.collection.round(extract=False)
        self.clock.advance(30)

    def stored(self) -> list[str]:
        return sorted(str(i.key) for i in self.t.items.query(ItemQuery(limit=10_000)))


@pytest.fixture
async def world(settings: Settings) -> AsyncIterator[World]:
    clock = FakeClock(START)
    api = FakeSocialData(clock=clock.now)
    table = {"daily_calls": 10_000, "cost_per_call": 0.0002}
    async with tidings_on(settings, api, clock, "socialdata", table) as t:
        yield World(t, api, clock)


def test_snowflake_and_watermark_follow_r_x_3() -> None:
    when = datetime(2024, 1, 1, tzinfo=UTC)
    assert q.snowflake(when) == (int(when.timestamp() * 1000) - 1288834974657) << 22
    assert q.tweet_time(q.snowflake(when)) == when
    assert q.watermark(5, when) == q.snowflake(when - timedelta(minutes=10))
    assert q.watermark(q.snowflake(when) + 7, when) == q.snowflake(when) + 7


def test_accounts_pack_stably_within_470_characters_and_24_accounts() -> None:
    short = [f"a{i:02d}" for i in range(50)]
    assert [len(g) for g in q.pack(short)] == [24, 24, 2]
    long = [f"handle_{i:08d}" for i in range(30)]  # 15 characters each
    groups = q.pack(long)
    assert all(len(q.since(q.packed(g), 1 << 62)) <= 512 for g in groups)
    assert all(len(q.packed(g)) <= q.MAX_QUERY_CHARS for g in groups)
    assert [h for g in groups for h in g] == long
    assert q.pack(long[:-1])[:-1] == groups[:-1], "removing one changes only what follows"
    assert q.pack([*long, "zz"])[:-1] == groups[:-1]
    assert q.packed(["a", "b"]) == "(from:a OR from:b) -filter:replies"
    assert q.single("a") == "from:a -filter:replies"


async def test_first_checks_go_alone_then_24_accounts_share_one_search(world: World) -> None:
    handles = [f"acct{i:02d}" for i in range(30)]
    await world.add(*handles)
    for h in handles:
        world.api.publish(h, f"hello from {h}\nsecond line", START - timedelta(hours=1))
    first = await world.t.collection.round(extract=False)
    assert first.created == 30 and len(world.searches()) == 30
    assert all("since_id" not in s for s in world.searches())
    world.clock.advance(31)
    for h in handles:
        world.api.publish(h, f"news of {h}", world.clock.at - timedelta(minutes=5))
    world.api.publish("acct03", "a reply", world.clock.at, reply=True)
    world.api.publish("acct04", "boosted", world.clock.at - timedelta(minutes=1), retweet=True)
    second = await world.t.collection.round(extract=False)
    batched = world.searches()[30:]
    # 30 accounts with a watermark: two searches (24 + 6); the 24 new tweets of the
    # first take two pages of 20
    assert sorted(b.count("from:") for b in set(batched)) == [6, 24] and len(batched) == 3
    assert all(b.startswith("(from:acct") and "since_id:" in b for b in batched)
    assert second.created == 30 and len(world.stored()) == 60
    src = world.t.sources.get("acct05")
    assert int(src.cursor["since_id"]) >= q.snowflake(world.clock.at - timedelta(minutes=10))
    item = next(i for i in world.t.items.query(ItemQuery(limit=100)) if i.title == "news of acct05")
    assert item.url.startswith("https://x.com/acct05/status/")
    assert item.raw["x"]["likes"] == 3 and item.raw["x"]["views"] == 40
    assert not any(i.title == "boosted" for i in world.t.items.query(ItemQuery(limit=100)))
    world.clock.advance(31)
    third = await world.t.collection.round(extract=False)
    # the watermark trails the last check by 10 minutes: tweets of 8:26 come again
    # (two pages for the 24), and are no-ops
    assert third.created == 0 and len(world.searches()) == 36


async def test_a_long_backlog_is_paged_ten_at_a_time_and_resumed(world: World) -> None:
    await world.followed("busy", "calm")
    # older than the 10 minutes the watermark trails by, so the next search asks no
    # more of them: only the segment brings the rest
    burst = [world.api.publish("busy", f"burst {n}", world.clock.at - timedelta(minutes=11,
                                                                             seconds=n))
             for n in range(250)]
    report = await world.t.collection.round(extract=False)
    assert report.results["busy"].pages == 10 and report.created == 200
    segments = world.t.sources.get("busy").cursor["segments"]
    assert len(segments) == 1 and "since_id:" in segments[0]["query"]
    world.clock.advance(30)
    await world.t.collection.round(extract=False)
    assert world.t.sources.get("busy").cursor["segments"] == []
    keys = world.stored()
    assert len(keys) == len(set(keys)) == 252
    assert {f"x:{t.id}" for t in burst} <= set(keys)


async def test_an_expired_backlog_cursor_is_replaced_by_max_id(world: World) -> None:
    await world.followed("busy")
    for n in range(230):
        world.api.publish("busy", f"burst {n}", world.clock.at - timedelta(seconds=n))
    await world.t.collection.round(extract=False)
    world.clock.advance(60 * 7)  # the fake's cursors live 6 hours
    report = await world.t.collection.round(extract=False)
    counts = report.results["busy"]
    assert counts.outcome is RunOutcome.OK
    assert any("backlog cursor was refused (HTTP 422)" in w for w in counts.warnings)
    assert world.t.sources.get("busy").cursor["segments"] == []
    assert len(world.stored()) == 231, "the search went on below what it had reached"
    assert any("max_id:" in s for s in world.searches())


async def test_a_cursor_that_loops_ends_the_search(world: World) -> None:
    await world.followed("loopy")
    for n in range(45):
        world.api.publish("loopy", f"post {n}", world.clock.at - timedelta(seconds=n))
    world.api.loop_cursor = True
    report = await world.t.collection.round(extract=False)
    assert any("repeated a cursor" in w for w in report.results["loopy"].warnings)
    assert len(world.searches()) == 3  # first check, then page 1 and the repeat


async def test_an_article_link_gets_its_body_from_the_article_endpoint(world: World) -> None:
    await world.followed("writer")
    tweet = world.api.publish("writer", "my essay", world.clock.at - timedelta(minutes=2),
                              article=True)
    await world.t.collection.round(extract=False)
    item = next(i for i in world.t.items.query(ItemQuery(limit=10)) if i.key == f"x:{tweet.id}")
    assert item.body_state is BodyState.OK and "<strong>Body</strong>" in (item.body or "")
    assert item.title == "Article by writer", "a tweet that is only a link takes the title"
    assert [c.path for c in world.api.calls][-1] == f"/twitter/article/{tweet.id}"
    assert not any("x.com" in c.path for c in world.api.calls)


async def test_an_article_that_fails_waits_pending_and_is_retried(world: World) -> None:
    await world.followed("writer")
    tweet = world.api.publish("writer", "essay", world.clock.at - timedelta(minutes=2),
                              article=True)
    world.api.article_fails = 1
    await world.t.collection.round(extract=False)
    item = next(i for i in world.t.items.query(ItemQuery(limit=10)) if i.key == f"x:{tweet.id}")
    assert item.body_state is BodyState.PENDING and item.raw["body_tries"] == 1
    world.clock.advance(30)
    await world.t.collection.round(extract=False)
    item = next(i for i in world.t.items.query(ItemQuery(limit=10)) if i.key == f"x:{tweet.id}")
    assert item.body_state is BodyState.OK
    assert world.t.sources.get("writer").cursor["bodies"] == []


async def test_a_refused_key_is_the_providers_trouble_reported_once(
    world: World, caplog: pytest.LogCaptureFixture,
) -> None:
    await world.add("a1", "a2", "a3")
    world.api.keys = {"another"}
    report = await world.t.collection.round(extract=False)
    assert {c.outcome for c in report.results.values()} == {RunOutcome.BUDGET}
    for sid in ("a1", "a2", "a3"):
        src = world.t.sources.get(sid)
        assert src.fail_count == 0 and src.health is Health.OK
    assert "API key …0001 refused (HTTP 401)" in report.results["a1"].error
    assert "sk-test-0001" not in report.results["a1"].error
    sent = len(world.api.calls)
    assert sent <= 3, "at most the calls already under way when the first was refused"
    world.clock.advance(5)
    await world.t.collection.round(["a1", "a2", "a3"], extract=False)
    assert len(world.api.calls) == sent, "no call is sent while the key is known refused"
    troubles = world.t.paid.troubles()
    assert list(troubles) == ["socialdata"]
    assert "…0001" in caplog.text and "sk-test-0001" not in caplog.text, "never logged whole"
    assert all("sk-test-0001" not in call.status for call in world.t.paid.calls())


@pytest.mark.parametrize(("status", "retry_after", "reason"), [
    (402, None, "balance used up (HTTP 402)"),
    (429, "120", "rate limited (HTTP 429)"),
    (429, None, "rate limited (HTTP 429)"),
    (503, None, "provider failing (HTTP 503)"),
])
async def test_provider_statuses_are_budget_outcomes_with_one_line_reasons(
    world: World, status: int, retry_after: str | None, reason: str,
) -> None:
    await world.add("a1")
    world.api.status, world.api.retry_after = status, retry_after
    report = await world.t.collection.round(extract=False)
    counts = report.results["a1"]
    assert counts.outcome is RunOutcome.BUDGET and reason in counts.error
    assert "\n" not in counts.error
    assert world.t.sources.get("a1").fail_count == 0
    if retry_after:
        trouble = world.t.paid.troubles()["socialdata"]
        assert trouble.until == world.clock.at + timedelta(seconds=int(retry_after))


async def test_garbage_and_a_dead_provider_lose_nothing(world: World) -> None:
    await world.add("a1")
    world.api.publish("a1", "first", START - timedelta(hours=1))
    world.api.garbage = True
    report = await world.t.collection.round(extract=False)
    assert "not JSON" in report.results["a1"].error
    assert world.t.sources.get("a1").cursor.get("since_id") is None, "no watermark moved"
    world.api.garbage = False
    world.clock.advance(16)
    report = await world.t.collection.round(extract=False)
    assert report.created == 1


async def test_a_provider_down_for_a_while_is_logged_once_and_cleared_by_success(
    world: World, caplog: pytest.LogCaptureFixture,
) -> None:
    await world.followed("a1")
    world.api.down = True
    for _ in range(4):  # each time past the pause: one call, refused again
        await world.t.collection.round(["a1"], extract=False)
        world.clock.advance(6)
    troubles = [r for r in caplog.records if "paid API trouble" in r.getMessage()]
    assert len(troubles) == 1 and "provider failing (HTTP 503)" in troubles[0].getMessage()
    assert world.t.sources.get("a1").fail_count == 0
    world.api.down = False
    report = await world.t.collection.round(["a1"], extract=False)
    assert report.results["a1"].outcome is RunOutcome.OK
    assert world.t.paid.troubles() == {}


async def test_an_account_with_no_tweets_at_its_first_check_says_why(world: World) -> None:
    await world.add("renamed_one")
    report = await world.t.collection.round(extract=False)
    counts = report.results["renamed_one"]
    assert counts.outcome is RunOutcome.OK
    assert any("renamed, suspended" in w for w in counts.warnings)


async def test_each_account_archives_its_own_tweets_of_a_shared_search(world: World) -> None:
    await world.followed("alpha", "beta")
    world.api.publish("alpha", "only alpha spoke", world.clock.at - timedelta(minutes=5))
    report = await world.t.collection.round(extract=False)
    assert report.results["alpha"].created == 1 and report.results["beta"].created == 0
    alpha = await world.t.collection.reparse("alpha")
    beta = await world.t.collection.reparse("beta")
    assert alpha.feeds == 2 and alpha.unchanged == 2, "its first check and its batch answer"
    assert beta.feeds == 1 and beta.unchanged == 1, "nothing of its own in the batch: no raw"
    assert alpha.revised == beta.revised == 0 and not alpha.errors and not beta.errors
