"""One collection round: every due source, concurrently, partial success.

Different hosts run in parallel; the one shared fetcher keeps each host polite
(per-host concurrency and spacing, R-HTTP-8), so sources on one host go
politely one after another while the rest of the round proceeds. Each source
has its own time limit inside ``collect_source``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol
from urllib.parse import urlsplit

from tidings.model import RunCounts, RunOutcome, Source
from tidings.pipeline import holders, timing
from tidings.pipeline.batch import Group, collect_group, groups
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.extraction import ExtractReport, extract_pending
from tidings.pipeline.fair import taking_turns


class RoundProgress(Protocol):
    """Told about a round as it goes; the CLI draws a progress bar from it."""

    def started(self, total: int) -> None: ...
    def finished(self, source: Source, counts: RunCounts) -> None: ...


@dataclass(slots=True)
class RoundReport:
    started_at: datetime
    finished_at: datetime | None = None
    results: dict[str, RunCounts] = field(default_factory=dict)
    extraction: ExtractReport | None = None  # bodies extracted after the round

    @property
    def sources(self) -> int:
        return len(self.results)

    def count(self, *outcomes: RunOutcome) -> int:
        return sum(1 for c in self.results.values() if c.outcome in outcomes)

    @property
    def ok(self) -> int:
        return self.count(RunOutcome.OK, RunOutcome.NOT_MODIFIED)

    @property
    def failed(self) -> int:
        return self.count(RunOutcome.FAILED)

    @property
    def waiting(self) -> int:
        """Sources not read because of a paid API (our budget, the provider's trouble)."""
        return self.count(RunOutcome.BUDGET)

    @property
    def created(self) -> int:
        return sum(c.created for c in self.results.values())

    @property
    def revised(self) -> int:
        return sum(c.revised for c in self.results.values())


#: sources of one host admitted into a round at once, per allowed request to it: a
#: run's time limit counts from admission, and beyond this many the wait for the
#: host's turn could use it up (a self-hosted RSSHub behind hundreds of sources)
HOST_ADMISSION = 16


def _host(source: Source) -> str:
    return urlsplit(source.url).hostname or ""


def interleave_hosts(sources: Sequence[Source]) -> list[Source]:
    """Order sources round-robin by host, so waiting on one busy host never fills
    every concurrency slot of the round while other hosts sit idle."""
    by_host: dict[str, list[Source]] = {}
    for source in sources:
        by_host.setdefault(_host(source), []).append(source)
    queues = list(by_host.values())
    out: list[Source] = []
    for i in range(max((len(q) for q in queues), default=0)):
        out.extend(q[i] for q in queues if i < len(q))
    return out


def _claim(unit: holders.Claiming, now: datetime, limit: int, only: Sequence[str] | None
           ) -> list[Source]:
    holders.recover(unit, now)  # a killed earlier round must not hold its sources
    return unit.claim_due_sources(now, limit, timing.lease_until(now), only=only or None,
                                  holder=holders.lease_name())


async def run_round(
    env: PipelineEnv, *, only: Sequence[str] | None = None,
    progress: RoundProgress | None = None, limit: int | None = None, extract: bool = True,
) -> RoundReport:
    """Claim the due sources (or exactly ``only``) and collect them all once; then, with
    ``extract``, up to ``settings.extract_per_round`` pending bodies (R-EXTRACT-1).

    ``finished_at`` is the end of collection, so the round's time stays comparable
    whether or not extraction follows."""
    now = env.clock()
    report = RoundReport(started_at=now)
    sources = await env.writer(_claim, now, limit or 1_000_000, only)
    if progress is not None:
        progress.started(len(sources))
    gate = asyncio.Semaphore(max(1, env.settings.collect_concurrency))
    per_host = HOST_ADMISSION * max(1, env.settings.per_host_concurrency)
    hosts = {host: asyncio.Semaphore(per_host) for host in map(_host, sources)}

    async def one(group: Group) -> None:
        async with hosts[_host(group.sources[0])], gate:
            counts = await collect_group(round_env, group)
        for source in group.sources:
            report.results[source.id] = counts[source.id]
            if progress is not None:
                progress.finished(source, counts[source.id])

    round_env = taking_turns(env)
    await asyncio.gather(*(one(g) for g in groups(interleave_hosts(sources))))
    report.finished_at = env.clock()
    if extract:
        report.extraction = await extract_pending(env)
    return report
