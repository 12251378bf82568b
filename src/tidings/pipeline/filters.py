"""Per-source entry rules applied between the reader and upsert (R-SCHED-9, §5).

Config shape (all optional, validated when a source is saved: ``pipeline/config.py``;
the settings file's ``[filters]`` table applies to every source as well)::

    url_allow   = ["^https://example\\.com/blog/"]       # keep only matching URLs
    url_rewrite = [{from = "http://old/", to = "https://new/"}]   # prefix rewrite
    [filters]
    block = [{field = "title", pattern = "(?i)sponsored"}]  # drop when any matches
    keep  = [{field = "category", pattern = "AI"}]          # drop unless one matches
    max_age_days = 30                                        # drop older entries
    drop_future = true                                       # drop entries dated ahead

``field`` is one of title, url, author, category, content. Every dropped entry
is counted, so a filter that suddenly eats a whole feed shows up (R-OPS-1).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from tidings.model import ItemData
from tidings.pipeline import config

FUTURE_SLACK = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class Rule:
    field: str
    pattern: re.Pattern[str]

    def matches(self, item: ItemData) -> bool:
        return any(self.pattern.search(v) for v in _values(item, self.field))


@dataclass(frozen=True, slots=True)
class EntryRules:
    """Compiled rules; ``keep`` holds one group per level (global, source): an entry
    must match a rule of every group."""

    url_allow: tuple[re.Pattern[str], ...] = ()
    url_rewrite: tuple[tuple[str, str], ...] = ()
    block: tuple[Rule, ...] = ()
    keep: tuple[tuple[Rule, ...], ...] = ()
    max_age_days: int | None = None
    drop_future: bool = False


def _values(item: ItemData, field: str) -> Sequence[str]:
    if field == "title":
        return (item.title,)
    if field == "url":
        return (item.url or "",)
    if field == "author":
        return (item.author,)
    if field == "category":
        return item.categories
    return (item.summary, item.body or "")


def _rules(rules: Sequence[config.Rule]) -> tuple[Rule, ...]:
    return tuple(Rule(r.field, re.compile(r.pattern)) for r in rules)


def compile_rules(common: config.CommonConfig, global_filters: config.Filters | None = None
                  ) -> EntryRules:
    """A source's rules joined with the global ones of the settings file (validated
    already: the patterns compile)."""
    levels = [f for f in (global_filters, common.filters) if f is not None]
    ages = [f.max_age_days for f in levels if f.max_age_days is not None]
    return EntryRules(
        url_allow=tuple(re.compile(p) for p in common.url_allow),
        url_rewrite=tuple((r.old, r.new) for r in common.url_rewrite),
        block=tuple(rule for f in levels for rule in _rules(f.block)),
        keep=tuple(_rules(f.keep) for f in levels if f.keep),
        max_age_days=min(ages) if ages else None,
        drop_future=any(f.drop_future for f in levels),
    )


def _rewrite(item: ItemData, rewrites: Sequence[tuple[str, str]]) -> ItemData:
    if not item.url:
        return item
    for old, new in rewrites:
        if item.url.startswith(old):
            return replace(item, url=new + item.url[len(old):])
    return item


def _passes(item: ItemData, rules: EntryRules, now: datetime) -> bool:
    if rules.url_allow and not any(p.search(item.url or "") for p in rules.url_allow):
        return False
    if any(rule.matches(item) for rule in rules.block):
        return False
    if any(not any(rule.matches(item) for rule in group) for group in rules.keep):
        return False
    when = item.published_at
    too_old = (when is not None and rules.max_age_days is not None
               and when < now - timedelta(days=rules.max_age_days))
    if too_old:
        return False
    return not (rules.drop_future and when is not None and when > now + FUTURE_SLACK)


def judge(items: Sequence[ItemData], rules: EntryRules, now: datetime
          ) -> list[ItemData | None]:
    """Each entry rewritten, or None where a rule drops it (in order)."""
    out: list[ItemData | None] = []
    for entry in items:
        item = _rewrite(entry, rules.url_rewrite)
        out.append(item if _passes(item, rules, now) else None)
    return out


def limit_batch(
    items: Sequence[ItemData], *, first_run: bool, now: datetime,
    first_limit: int, first_months: int, later_limit: int,
) -> list[ItemData]:
    """First run: the newest ``first_limit`` within ``first_months``; later: ``later_limit``.

    Entries are ordered newest first by their date; undated entries keep their
    feed position relative to each other (feeds list newest first by habit).
    """
    def newest_first(pair: tuple[int, ItemData]) -> tuple[bool, float, int]:
        index, item = pair
        when = item.published_at
        return (when is None, -when.timestamp() if when else 0.0, index)

    ranked = [item for _, item in sorted(enumerate(items), key=newest_first)]
    if not first_run:
        return ranked[:later_limit]
    oldest = now - timedelta(days=30 * first_months)
    recent = [it for it in ranked if it.published_at is None or it.published_at >= oldest]
    return recent[:first_limit]


def summary_only(enabled: bool, items: Sequence[ItemData]) -> list[ItemData]:
    """For a summary-only source (SPEC §14) entries keep no body, and say why."""
    if not enabled:
        return list(items)
    return [replace(it, body=None, raw={**it.raw, "summary_only": True}) for it in items]
