"""Operations figures: per-source overview, cross-run warnings, the weekly report.

Silent failure is the enemy (R-OPS-1): a feed that starts returning an empty
or half-broken list does not raise anything, so the signs are looked for in
the numbers - a filter eating most of the entries, output collapsing from one
day to the next, entries without title or link (the pipeline flags each run;
this module carries the latest run's flags and adds the ones that need more
than one run). Every figure comes from one bulk query per kind (store.ops).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from tidings.model import FetchRun, Health
from tidings.store.ops import OpsReads, RunTotals
from tidings.store.sources import SourceReads

WEEK = timedelta(days=7)
#: R-OPS-1: a day with less than a fifth of the previous day's new items
DROP_SHARE = 0.8
#: ...but only when the previous day had enough items to mean something
DROP_MIN_BASE = 5
FILTERED_WEEK_SHARE = 0.5
FILTERED_MIN_FOUND = 10


class ReportReads(OpsReads, SourceReads, Protocol):
    """What the reports read: the bulk figures, and the sources they are about."""


@dataclass(frozen=True, slots=True)
class SourceOverview:
    """One line of ``tidings sources``: schedule, health, last outcome, output, warnings."""

    id: str
    title: str
    kind: str
    url: str
    health: Health
    fail_count: int
    interval_min: int
    next_fetch_at: datetime | None
    muted_reason: str | None
    last_run_at: datetime | None
    last_outcome: str | None
    last_reason: str | None
    items_per_day: tuple[int, ...]  # the last 7 days, oldest first
    warnings: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "title": self.title, "kind": self.kind, "url": self.url,
            "health": self.health.value, "fail_count": self.fail_count,
            "interval_min": self.interval_min,
            "next_fetch_at": _iso(self.next_fetch_at), "muted": self.muted_reason,
            "last_run_at": _iso(self.last_run_at), "last_outcome": self.last_outcome,
            "last_reason": self.last_reason, "items_per_day": list(self.items_per_day),
            "warnings": list(self.warnings),
        }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def source_warnings(
    daily: Sequence[int], totals: RunTotals | None, last_run: FetchRun | None,
) -> tuple[str, ...]:
    """The warnings one source shows, from its recent numbers (R-OPS-1).

    ``daily`` holds new items per 24 h, oldest first (the last two compared).
    """
    out = [f"last run: {w}" for w in (last_run.warnings if last_run else ())]
    if len(daily) >= 2:
        before, last = daily[-2], daily[-1]
        if before >= DROP_MIN_BASE and last < before * (1 - DROP_SHARE):
            out.append(f"new items fell from {before} to {last} in the last 24 h")
    if totals and totals.found >= FILTERED_MIN_FOUND:
        share = totals.filtered / totals.found
        if share > FILTERED_WEEK_SHARE:
            out.append(f"{share:.0%} of the entries seen this week were filtered out")
    return tuple(out)


def _reason(run: FetchRun | None) -> str | None:
    if run is None:
        return None
    if run.error:
        return run.error
    if run.http_status and run.http_status >= 400:
        return f"HTTP {run.http_status}"
    return None


def overview(store: ReportReads, now: datetime,
             totals: Mapping[str, RunTotals] | None = None) -> list[SourceOverview]:
    """Every source with its figures, from four bulk queries (``totals``: the week's
    run totals when the caller has them already)."""
    sources = store.list_sources()
    daily = store.new_item_counts(now, 7)
    totals = store.run_totals(now - WEEK) if totals is None else totals
    last = store.last_runs()
    out = []
    for s in sources:
        counts = daily.get(s.id, (0,) * 7)
        run = last.get(s.id)
        out.append(SourceOverview(
            id=s.id, title=s.title, kind=s.kind, url=s.url, health=s.health,
            fail_count=s.fail_count, interval_min=s.interval_min,
            next_fetch_at=s.next_fetch_at, muted_reason=s.muted_reason,
            last_run_at=run.started_at if run else None,
            last_outcome=run.outcome.value if run else None, last_reason=_reason(run),
            items_per_day=counts, warnings=source_warnings(counts, totals.get(s.id), run),
        ))
    return out


# ------------------------------------------------------------------ diversity


@dataclass(frozen=True, slots=True)
class SourceDiversity:
    """R-OPS-2 for one source over the window."""

    source_id: str
    items: int
    distinct_titles: int
    repeated: int  # stories another source had first (own copies and listings)
    listings: int  # everything it carried: own items plus others' items it listed

    @property
    def diversity(self) -> float:
        return self.distinct_titles / self.items if self.items else 1.0

    @property
    def second_hand_share(self) -> float:
        return self.repeated / self.listings if self.listings else 0.0

    @property
    def second_hand(self) -> bool:
        """Mostly repeats others: an aggregator or mirror rather than an original source."""
        return self.listings > 0 and self.second_hand_share >= 0.5


@dataclass(frozen=True, slots=True)
class DiversityReport:
    since: datetime
    sources: tuple[SourceDiversity, ...]
    edges: tuple[tuple[str, str, int], ...]  # (original, repeater, stories), largest first

    def as_json(self) -> dict[str, Any]:
        return {
            "since": self.since.isoformat(),
            "sources": [{"id": d.source_id, "items": d.items,
                         "distinct_titles": d.distinct_titles,
                         "diversity": round(d.diversity, 3), "repeated": d.repeated,
                         "second_hand_share": round(d.second_hand_share, 3),
                         "second_hand": d.second_hand} for d in self.sources],
            "reprints": [{"original": o, "repeater": r, "stories": n}
                         for o, r, n in self.edges],
        }


def diversity_report(store: OpsReads, now: datetime, days: int = 30) -> DiversityReport:
    since = now - timedelta(days=days)
    owned = store.diversity(since)
    repeated: dict[str, int] = {}
    listed: dict[str, int] = {}
    pairs: dict[tuple[str, str], int] = {}
    for e in store.reprint_edges(since):
        repeated[e.repeater] = repeated.get(e.repeater, 0) + e.items
        if e.via == "listing":
            listed[e.repeater] = listed.get(e.repeater, 0) + e.items
        pairs[(e.original, e.repeater)] = pairs.get((e.original, e.repeater), 0) + e.items
    ids = sorted(set(owned) | set(repeated))
    rows = []
    for sid in ids:
        d = owned.get(sid)
        items, distinct = (d.items, d.distinct_titles) if d else (0, 0)
        rows.append(SourceDiversity(sid, items, distinct, repeated.get(sid, 0),
                                    items + listed.get(sid, 0)))
    edges = sorted(((o, r, n) for (o, r), n in pairs.items()), key=lambda e: (-e[2], e[0], e[1]))
    return DiversityReport(since, tuple(rows), tuple(edges))


# -------------------------------------------------------------- weekly report


@dataclass(frozen=True, slots=True)
class HealthReport:
    """The weekly source-health report (R-OPS-3), as text and as JSON."""

    generated_at: datetime
    by_health: Mapping[str, int]
    runs: int
    failed_runs: int
    new_items: int
    failing: tuple[SourceOverview, ...]
    degraded: tuple[SourceOverview, ...]
    muted: tuple[SourceOverview, ...]
    warned: tuple[SourceOverview, ...]
    silent: tuple[SourceOverview, ...]
    diversity: DiversityReport

    def as_json(self) -> dict[str, Any]:
        def ids(rows: Sequence[SourceOverview]) -> list[dict[str, Any]]:
            return [r.as_json() for r in rows]

        return {
            "generated_at": self.generated_at.isoformat(), "sources": dict(self.by_health),
            "runs": self.runs, "failed_runs": self.failed_runs, "new_items": self.new_items,
            "failing": ids(self.failing), "degraded": ids(self.degraded),
            "muted": ids(self.muted), "warnings": ids(self.warned),
            "silent": [r.id for r in self.silent], "diversity": self.diversity.as_json(),
        }

    def text(self) -> str:
        return "\n".join(_report_lines(self)) + "\n"


def health_report(store: ReportReads, now: datetime) -> HealthReport:
    week = store.run_totals(now - WEEK)
    rows = overview(store, now, week)
    totals = week.values()
    by_health = {h.value: sum(1 for r in rows if r.health is h and not r.muted_reason)
                 for h in Health}
    by_health["muted"] = sum(1 for r in rows if r.muted_reason)
    live = [r for r in rows if not r.muted_reason]
    return HealthReport(
        generated_at=now, by_health=by_health,
        runs=sum(t.runs for t in totals), failed_runs=sum(t.failed for t in totals),
        new_items=sum(sum(r.items_per_day) for r in rows),
        failing=tuple(r for r in live if r.health is Health.FAILING),
        degraded=tuple(r for r in live if r.health is Health.DEGRADED),
        muted=tuple(r for r in rows if r.muted_reason),
        warned=tuple(r for r in live if r.warnings),
        silent=tuple(r for r in live if not any(r.items_per_day)),
        diversity=diversity_report(store, now),
    )


def _report_lines(r: HealthReport) -> list[str]:
    ok_share = (r.runs - r.failed_runs) / r.runs if r.runs else 1.0
    counts = ", ".join(f"{n} {h}" for h, n in r.by_health.items())
    lines = [
        f"tidings source health, week to {r.generated_at:%Y-%m-%d %H:%M} UTC",
        f"sources: {counts}",
        f"runs: {r.runs} ({ok_share:.1%} without failure), new items: {r.new_items}",
    ]

    def section(title: str, rows: Sequence[str]) -> None:
        if rows:
            lines.extend(["", f"{title} ({len(rows)}):", *(f"  - {x}" for x in rows)])

    section("Failing", [f"{s.id}: {s.fail_count} failures in a row, "
                        f"{s.last_reason or 'no reason recorded'}" for s in r.failing])
    section("Degraded", [f"{s.id}: {s.last_reason or 'one failure'}" for s in r.degraded])
    section("Muted", [f"{s.id}: {s.muted_reason}" for s in r.muted])
    section("Warnings", [f"{s.id}: {'; '.join(s.warnings)}" for s in r.warned])
    section("No new items in 7 days", [s.id for s in r.silent])
    d = r.diversity
    section("Low diversity (under half distinct titles, 30 days)",
            [f"{x.source_id}: {x.distinct_titles}/{x.items}" for x in d.sources
             if x.items >= 10 and x.diversity < 0.5])
    section("Second-hand sources (30 days)",
            [f"{x.source_id}: {x.second_hand_share:.0%} first seen elsewhere"
             for x in d.sources if x.second_hand])
    section("Most repeated (original -> repeater, stories)",
            [f"{o} -> {rep}: {n}" for o, rep, n in d.edges[:10]])
    return lines
