"""Batch readers and the spend ledger (issue "Refit the core", R-SCHED-3): a small reader
that reads three accounts per paid call, against a local server speaking its contract.

The reader is registered for the ``x`` kind for the length of a test (the real X
reader arrives with its own issue); everything else is the product's: the round and
the scheduler group due sources by batch key, every source keeps its own run,
cursor and failure, each paid call is recorded, and a day's budget is never passed.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiohttp import web

from netservers import serve
from tidings.app import ItemQuery, SourceUpdate, Tidings
from tidings.errors import FetchError, TidingsError
from tidings.model import Health, ItemData, RunOutcome, SourceKind
from tidings.pipeline import batch
from tidings.readers import kind_of, register, register_kind
from tidings.readers.base import ReadContext, ReadResult
from tidings.readers.options import ReaderConfig
from tidings.schedule.runner import Runner, RunnerOptions
from tidings.settings import Settings

NOW = datetime.now(UTC).replace(microsecond=0)


class FakeSearchConfig(ReaderConfig):
    handle: str = ""


class FakeSearchReader:
    """Three accounts per search; the answer maps each account to its new posts."""

    kind = SourceKind("x")
    config_model: type[ReaderConfig] = FakeSearchConfig
    max_batch = 3

    def batch_key(self, source: Any, config: ReaderConfig) -> str | None:
        return source.visibility.value  # editorial and isolated accounts never share a call

    async def read(self, ctx: ReadContext) -> ReadResult:
        (result,) = await self.read_batch([ctx])
        if isinstance(result, TidingsError):
            raise result
        return result

    def parse_raw(self, source: Any, raw: Any) -> ReadResult:
        return ReadResult()

    async def read_batch(self, contexts: Sequence[ReadContext]
                         ) -> Sequence[ReadResult | TidingsError]:
        first = contexts[0]
        provider = first.paid.provider("fake")
        handles = [c.config.handle for c in contexts]  # type: ignore[attr-defined]
        url = f"{provider.base_url}/search?accounts={','.join(handles)}"
        async with first.paid.call("fake", "search", [c.source.id for c in contexts]) as note:
            resp = await first.fetcher.fetch(url, headers={"Authorization":
                                                          f"Bearer {provider.api_key}"})
            answer = json.loads(resp.content)
            note.cost = answer.get("cost")
        out: list[ReadResult | TidingsError] = []
        for handle in handles:
            posts = answer["posts"].get(handle)
            if posts is None:
                out.append(FetchError(url, f"{url}: account {handle!r} not found"))
                continue
            items = tuple(ItemData(title=p["text"], url=p["url"], key=f"x:{p['id']}",
                                   published_at=NOW - timedelta(minutes=p["id"] % 50))
                          for p in posts)
            top = max((p["id"] for p in posts), default=0)
            out.append(ReadResult(items=items, cursor={"since_id": top}, http_status=200))
        return out


@dataclass
class Api:
    """The fake provider: counts searches, checks the key, may fail."""

    searches: list[list[str]] = field(default_factory=list)
    status: int = 200

    def app(self) -> web.Application:
        async def search(request: web.Request) -> web.Response:
            assert request.headers["Authorization"] == "Bearer key-0000-abcd"
            accounts = request.query["accounts"].split(",")
            self.searches.append(accounts)
            if self.status != 200:
                return web.Response(status=self.status, text="provider trouble")
            posts = {a: [{"id": _post_id(a, i), "text": f"{a} post {i}",
                          "url": f"https://x.example/{a}/status/{_post_id(a, i)}"}
                         for i in range(2)]
                     for a in accounts if a != "gone"}
            return web.json_response({"posts": posts, "cost": 0.25})

        app = web.Application()
        app.router.add_get("/search", search)
        return app


def _post_id(account: str, n: int) -> int:
    return int.from_bytes(account.encode(), "big") % 100_000 * 10 + n


@pytest.fixture(autouse=True)
def fake_reader() -> Iterator[None]:
    real = kind_of("x")
    register(SourceKind("x"), FakeSearchReader)
    yield
    register_kind(real)


@pytest.fixture
async def world(settings: Settings) -> AsyncIterator[tuple[Tidings, Api]]:
    api = Api()
    async with serve(api.app()) as base:
        providers = {"fake": {"base_url": base, "api_key": "key-0000-abcd",
                              "daily_calls": 2, "cost_per_call": 0.1}}
        t = Tidings.open(replace(settings, providers=providers), create=True)
        yield t, api
        await t.aclose()


async def add_accounts(t: Tidings, handles: Sequence[str]) -> None:
    for handle in handles:
        await t.sources.create(f"https://x.example/{handle}", kind=SourceKind("x"),
                               source_id=handle, config={"handle": handle})


async def test_a_round_reads_three_accounts_per_call_and_keeps_runs_per_source(
    world: tuple[Tidings, Api],
) -> None:
    t, api = world
    await add_accounts(t, ["a1", "a2", "a3", "a4", "gone"])
    report = await t.collection.round(extract=False)
    assert sorted(map(sorted, api.searches)) == [["a1", "a2", "a3"], ["a4", "gone"]]
    assert {sid: c.outcome for sid, c in report.results.items()} == {
        "a1": RunOutcome.OK, "a2": RunOutcome.OK, "a3": RunOutcome.OK, "a4": RunOutcome.OK,
        "gone": RunOutcome.FAILED}
    assert [report.results[s].created for s in ("a1", "a2", "a3", "a4")] == [2, 2, 2, 2]
    assert t.sources.get("a2").cursor["since_id"] == _post_id("a2", 1)
    gone = t.sources.get("gone")
    assert gone.fail_count == 1 and gone.health is Health.DEGRADED
    assert "account 'gone' not found" in (gone.last_error or "")
    assert [r.outcome for r in t.sources.runs("a4")] == [RunOutcome.OK]
    assert len(t.items.query(ItemQuery(limit=100))) == 8
    spend = t.paid.today()["fake"]
    assert (spend.calls, spend.cost) == (2, 0.5), "the cost the API reported"


async def test_a_budget_that_runs_out_mid_round_is_not_a_failure(
    world: tuple[Tidings, Api],
) -> None:
    t, api = world
    handles = [f"b{n}" for n in range(8)]  # three calls' worth; the budget allows two
    await add_accounts(t, handles)
    report = await t.collection.round(extract=False)
    assert len(api.searches) == 2, "the third call was never made"
    served = sum(len(s) for s in api.searches)
    outcomes = Counter(c.outcome for c in report.results.values())
    assert outcomes == {RunOutcome.OK: served, RunOutcome.BUDGET: 8 - served}
    for sid, counts in report.results.items():
        source = t.sources.get(sid)
        if counts.outcome is RunOutcome.BUDGET:
            assert "daily budget of 2 calls reached" in (counts.error or "")
            assert source.fail_count == 0 and source.health is Health.OK
            assert source.next_fetch_at is not None
            assert source.next_fetch_at - datetime.now(UTC) < timedelta(minutes=16)
    calls = t.pipeline_env().store.paid_calls("fake")
    assert len(calls) == 2 and {c.status for c in calls} == {"ok"}
    assert sorted(len(c.source_ids) for c in calls) == sorted(len(s) for s in api.searches)


async def test_a_failed_paid_call_is_recorded_and_fails_its_sources(
    world: tuple[Tidings, Api],
) -> None:
    t, api = world
    api.status = 500
    await add_accounts(t, ["c1", "c2"])
    report = await t.collection.round(extract=False)
    assert {c.outcome for c in report.results.values()} == {RunOutcome.FAILED}
    assert all("HTTP 500" in (c.error or "") for c in report.results.values())
    (call,) = t.pipeline_env().store.paid_calls("fake")
    assert call.status.startswith("failed: ") and "HTTP 500" in call.status
    assert call.source_ids == ("c1", "c2") and call.cost == 0.1
    assert t.paid.today()["fake"].calls == 1, "a failed call counts against the budget"


async def test_the_scheduler_groups_due_sources_the_same_way(
    world: tuple[Tidings, Api],
) -> None:
    t, api = world
    await add_accounts(t, ["d1", "d2", "d3"])
    await t.sources.update("d3", SourceUpdate(visibility="isolated"))  # type: ignore[arg-type]
    runner = Runner(t.pipeline_env(), options=RunnerOptions(tz=UTC, memory_limit_mb=0,
                                                            grace_seconds=1))
    started = await runner.tick()
    assert {s.id for s in started} == {"d1", "d2", "d3"}
    assert runner.in_flight["d1"] is runner.in_flight["d2"], "one task for one batch"
    await asyncio.wait_for(asyncio.gather(*set(runner.in_flight.values())), 10)
    assert sorted(map(sorted, api.searches)) == [["d1", "d2"], ["d3"]]
    assert runner.stats.finished == 3
    await runner.drain()


async def test_a_batched_source_whose_pages_hang_fails_in_the_run_time(
    world: tuple[Tidings, Api], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each source of a batch plans its part (detail pages included) within the time a
    lone run has, like ``collect_source``: a hanging page cannot hold the round."""
    t, _ = world
    for handle in ("e1", "e2"):
        await t.sources.create(f"https://x.example/{handle}", kind=SourceKind("x"),
                               source_id=handle, config={"handle": handle, "detail": {}})

    def hanging_pages(*args: object) -> Callable[[list[ItemData]], Awaitable[list[ItemData]]]:
        async def never(batch: list[ItemData]) -> list[ItemData]:
            await asyncio.Event().wait()
            return batch

        return never

    monkeypatch.setattr(batch, "detail_step", hanging_pages)
    monkeypatch.setattr(batch, "RUN_TIMEOUT_S", 2.0)
    report = await asyncio.wait_for(t.collection.round(extract=False), 20)
    assert {c.outcome for c in report.results.values()} == {RunOutcome.FAILED}
    assert all("took longer than" in (c.error or "") for c in report.results.values())
    assert all(t.sources.get(sid).fail_count == 1 for sid in ("e1", "e2"))
