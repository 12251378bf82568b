"""``tidings doctor SOURCE`` (R-OPS-5): one source, every stage, nothing stored.

The same stages as ``collect_source`` - config check, request, response,
parse, filters, batch limit, identity and the create/revise/rediscover
decision - each reported with what it saw, so "why is this feed empty?" is
answered by reading, not by guessing. The request is unconditional by
default (a 304 would show nothing to parse); storage is only read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from tidings.errors import TidingsError
from tidings.identity import batch_keys, choose_identity_mode
from tidings.model import ItemData, Source
from tidings.pipeline.collect import PipelineEnv
from tidings.pipeline.filters import apply_rules, compile_rules, limit_batch, summary_only
from tidings.pipeline.upsert import plan_prepared, prepare
from tidings.readers import get_reader
from tidings.readers.base import ReadContext, ReadResult

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
        lines = [f"doctor {self.source.id} ({self.source.kind.value}) {self.source.url}"]
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


async def doctor(env: PipelineEnv, source: Source, *, conditional: bool = False) -> DoctorReport:
    """Run every stage of a collection of ``source`` without writing anything."""
    report = DoctorReport(source, conditional)
    now = env.clock()
    try:
        reader = get_reader(source.kind)
        config = reader.validate_config(source.config)
        rules = compile_rules(config)
        report.stages.append(("config", f"valid ({len(config)} keys)"))
        asked = source if conditional else replace(source, cursor={})
        report.stages.append(("request", f"GET {source.url}" +
                              (" (conditional)" if conditional else " (unconditional)")))
        result = await reader.read(ReadContext(asked, env.fetcher, now))
    except TidingsError as exc:
        report.error = str(exc)
        return report
    _response(report, result)
    if result.not_modified:
        return report
    after = [next(iter(apply_rules([item], rules, now)[0]), None) for item in result.items]
    kept = [a for a in after if a is not None]
    report.stages.append(("filters", f"{len(kept)} kept, {len(after) - len(kept)} filtered out"))
    s = env.settings
    batch = limit_batch(kept, first_run=source.last_success_at is None, now=now,
                        first_limit=s.initial_backfill_limit,
                        first_months=s.initial_backfill_months, later_limit=s.max_items_per_run)
    report.stages.append(("limit", f"{len(batch)} in the batch"
                          + (" (first collection)" if source.last_success_at is None else "")))
    mode = choose_identity_mode([it.guid for it in result.items],
                                [it.url for it in result.items], source.identity_mode)
    if mode is not source.identity_mode:
        report.stages.append(("identity", f"would degrade to {mode.value}: the feed repeats "
                                          "or omits GUIDs"))
    decided = _decisions(env, replace(source, identity_mode=mode), config, batch, now)
    for item, rewritten in zip(result.items, after, strict=True):
        if rewritten is None:
            verdict, key = "filtered", None
        else:
            verdict, key = decided.get(id(rewritten), ("over limit", None))
        report.entries.append(DoctorEntry(item.title, item.url, item.published_at, verdict, key))
    return report


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


def _decisions(
    env: PipelineEnv, source: Source, config: Mapping[str, Any], batch: Sequence[ItemData],
    now: datetime,
) -> dict[int, tuple[str, str | None]]:
    """The storage decision for each batch entry (by object id): exactly what
    collection would decide (same summary-only rule, same planning step), with
    nothing written."""
    tracking = env.settings.tracking_params
    keys = [k.key for k in batch_keys(source.id, batch, source.identity_mode, tracking)]
    prepared = prepare(source, summary_only(config, batch), now, tracking)
    _, outcome = plan_prepared(env.store, source, prepared, now)
    out: dict[int, tuple[str, str | None]] = {}
    seen: set[str] = set()
    for item, key in zip(batch, keys, strict=True):
        out[id(item)] = ("repeated" if key in seen else outcome.actions[key].value, key)
        seen.add(key)
    return out
