"""``tidings doctor SOURCE`` (R-OPS-5): one source, every stage, nothing stored.

The same stages as ``collect_source``, through the same reading path
(``pipeline/reading.py``) - config check, request, response, parse, filters,
batch limit, identity and the create/revise/rediscover decision - each reported
with what it saw, so "why is this feed empty?" is answered by reading, not by
guessing. The request is unconditional by
default (a 304 would show nothing to parse); storage is only read.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from tidings.errors import ConfigError, TidingsError
from tidings.model import CostClass, Source
from tidings.pipeline.detail import detail_step
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.reading import Listing, SourceRules, read_source
from tidings.pipeline.upsert import plan_prepared
from tidings.readers.base import CallNote, NoPaidCalls, PaidCalls, ReadResult
from tidings.readers.options import Provider
from tidings.textutil import plural

_SHOWN_HEADERS = ("content-type", "content-length", "etag", "last-modified", "cache-control",
                  "expires", "retry-after", "content-encoding")


@dataclass(frozen=True, slots=True)
class DoctorEntry:
    title: str
    url: str | None
    published_at: datetime | None
    verdict: str  # filtered, over the batch limit, or the upsert decision (create, ...)
    key: str | None = None


@dataclass(slots=True)
class DoctorReport:
    source: Source
    conditional: bool
    stages: list[tuple[str, str]] = field(default_factory=list)  # (stage, what happened)
    error: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    entries: list[DoctorEntry] = field(default_factory=list)
    warnings: tuple[str, ...] = ()
    label: str = "doctor"  # "preview" for a source that is not stored

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source.id, "url": self.source.url, "conditional": self.conditional,
            "stages": [{"stage": s, "detail": d} for s, d in self.stages],
            "error": self.error, "headers": self.headers, "warnings": list(self.warnings),
            "entries": [{"title": e.title, "url": e.url, "key": e.key, "verdict": e.verdict,
                         "published_at": e.published_at.isoformat() if e.published_at
                         else None} for e in self.entries],
        }

    def text(self) -> str:
        who = "" if self.label == "preview" else f" {self.source.id}"  # a preview has no id
        lines = [f"{self.label}{who} ({self.source.kind}) {self.source.url}"]
        lines += [f"  {stage:<9} {detail}" for stage, detail in self.stages]
        lines += [f"  header    {k}: {v}" for k, v in self.headers.items()]
        lines += [f"  warning   {w}" for w in self.warnings]
        if self.error:
            lines.append(f"  FAILED    {self.error}")
        for e in self.entries:
            when = f"{e.published_at:%Y-%m-%d %H:%M}" if e.published_at else "no date"
            lines.append(f"  {e.verdict:<12} {when}  {e.title[:70] or '(no title)'}  "
                         f"{e.url or '(no link)'}")
        return "\n".join(lines) + "\n"


async def doctor(env: PipelineEnv, source: Source, *, conditional: bool = False,
                 paid: PaidCalls | None = None, label: str = "doctor") -> DoctorReport:
    """Run every stage of a collection of ``source`` without writing anything
    (``paid``: the ledger, for a run that may spend on a paid API, as a preview does;
    by default nothing is spent, and a paid source stops at the read saying so)."""
    report = DoctorReport(source, conditional, label=label)
    now = env.clock()
    try:
        rules = SourceRules.of(source, env.filters)
        report.stages.append(("config", f"valid ({plural(len(source.config), 'key')})"))
        asked = source if conditional else replace(source, cursor={})
        report.stages.append(("request", _request(source, rules, conditional,
                                                  spends=paid is not None)))
        listing = await read_source(env.settings, asked, rules,
                                    rules.context(asked, env.fetcher, now,
                                                  paid=paid or _NoSpending(env.paid, source)),
                                    detail=detail_step(env, source, rules))
    except TidingsError as exc:
        report.error = str(exc)
        return report
    _response(report, listing.result)
    if listing.result.not_modified:
        return report
    _stages(report, listing)
    actions = plan_prepared(env.store, listing.source, listing.prepared, now)[1].actions
    seen: set[str] = set()
    for entry in listing.entries:
        verdict = entry.fate.value
        if entry.key is not None:
            verdict = "repeated" if entry.key in seen else actions[entry.key].value
            seen.add(entry.key)
        item = entry.item
        report.entries.append(DoctorEntry(item.title, item.url, item.published_at, verdict,
                                          entry.key))
    return report


def _request(source: Source, rules: SourceRules, conditional: bool, *, spends: bool) -> str:
    """What is sent: a GET of the source's URL, or a paid API's call, which sends
    nothing to the URL shown for the source (an x.com profile, ``wechat:…``)."""
    if source.cost_class in (CostClass.PAID_LIST, CostClass.PAID_RENDER):
        provider = getattr(rules.config, "provider", None) or "?"
        call = "one call, counted in its daily budget" if spends else "no call sent"
        return f"paid API {provider}: {call} (nothing is sent to {source.url} itself)"
    return f"GET {source.url}" + (" (conditional)" if conditional else " (unconditional)")


class _NoSpending(NoPaidCalls):
    """doctor's ledger: it sends no paid call (each costs money), and says what does.

    A provider that is not configured is named with its fix first, as the ledger
    words it, since a collection would fail the same way.
    """

    def __init__(self, ledger: PaidCalls, source: Source) -> None:
        self._ledger = ledger
        self._source = source

    def provider(self, name: str) -> Provider:
        self._ledger.provider(name)
        raise ConfigError(f"doctor sends no call to the paid API {name!r} (each costs "
                          f"money): `tidings collect {self._source.id}` reads the source, "
                          "recorded and within the daily budget")

    def call(self, provider: str, purpose: str, source_ids: Sequence[str]
             ) -> AbstractAsyncContextManager[CallNote]:
        self.provider(provider)
        raise AssertionError("unreachable")


def _stages(report: DoctorReport, listing: Listing) -> None:
    kept = len(listing.entries) - listing.filtered
    report.stages.append(("filters", f"{kept} kept, {listing.filtered} filtered out"))
    first = report.source.last_success_at is None
    report.stages.append(("limit", f"{listing.batch_size} in the batch"
                          + (" (first collection)" if first else "")))
    mode = listing.source.identity_mode
    if mode is not report.source.identity_mode:
        report.stages.append(("identity", f"would degrade to {mode.value}: the feed repeats "
                                          "or omits GUIDs"))


def _response(report: DoctorReport, result: ReadResult) -> None:
    raw = result.raw[0] if result.raw else None
    where = result.final_url or (raw.final_url if raw else report.source.url)
    report.stages.append(("response", f"HTTP {result.http_status or '?'} from {where}, "
                          f"{result.bytes} bytes, {result.pages} page(s)"))
    if raw is not None:
        lower = {k.lower(): v for k, v in raw.headers.items()}
        report.headers = {k: lower[k] for k in _SHOWN_HEADERS if k in lower}
    report.warnings = result.warnings
    if result.not_modified:
        report.stages.append(("parse", "304 Not Modified: nothing to parse"))
        return
    report.stages.append(("parse", f"{len(result.items)} entries"
                          + (f", feed title {result.title!r}" if result.title else "")))
    if result.not_before:
        report.stages.append(("next", f"caching hints ask not before {result.not_before:%c}"))
