"""Per-source entry rules applied between the reader and upsert (R-SCHED-9, §5).

Config shape (all optional, validated when a source is saved)::

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from tidings.errors import ConfigError
from tidings.model import ItemData

FIELDS = ("title", "url", "author", "category", "content")
FILTER_KEYS = frozenset({"block", "keep", "max_age_days", "drop_future"})
FUTURE_SLACK = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class Rule:
    field: str
    pattern: re.Pattern[str]

    def matches(self, item: ItemData) -> bool:
        return any(self.pattern.search(v) for v in _values(item, self.field))


@dataclass(frozen=True, slots=True)
class EntryRules:
    url_allow: tuple[re.Pattern[str], ...] = ()
    url_rewrite: tuple[tuple[str, str], ...] = ()
    block: tuple[Rule, ...] = ()
    keep: tuple[Rule, ...] = ()
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


def _compile(pattern: Any, where: str) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise ConfigError(f"{where}: pattern must be a string")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"{where}: bad regular expression {pattern!r} ({exc})") from exc


def _rules(raw: Any, where: str) -> tuple[Rule, ...]:
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: expected a list of {{field, pattern}} tables")
    out = []
    for n, rule in enumerate(raw):
        if not isinstance(rule, Mapping) or set(rule) != {"field", "pattern"}:
            raise ConfigError(f"{where}[{n}]: expected exactly the keys field and pattern")
        if rule["field"] not in FIELDS:
            raise ConfigError(f"{where}[{n}]: field must be one of {', '.join(FIELDS)}")
        out.append(Rule(rule["field"], _compile(rule["pattern"], f"{where}[{n}]")))
    return tuple(out)


def compile_rules(config: Mapping[str, Any]) -> EntryRules:
    """Build the rules from a source config; raises ConfigError naming the bad part."""
    filters = config.get("filters") or {}
    if not isinstance(filters, Mapping):
        raise ConfigError("filters: expected a table")
    unknown = set(filters) - FILTER_KEYS
    if unknown:
        raise ConfigError(f"filters: unknown key {sorted(unknown)[0]!r}")
    rewrites = []
    for n, rw in enumerate(config.get("url_rewrite") or []):
        if not isinstance(rw, Mapping) or set(rw) != {"from", "to"}:
            raise ConfigError(f"url_rewrite[{n}]: expected exactly the keys from and to")
        rewrites.append((str(rw["from"]), str(rw["to"])))
    max_age = filters.get("max_age_days")
    if max_age is not None and (not isinstance(max_age, int) or max_age < 1):
        raise ConfigError("filters.max_age_days: expected a positive whole number")
    block = _rules(filters.get("block", []), "filters.block")
    return EntryRules(
        url_allow=tuple(_compile(p, "url_allow") for p in config.get("url_allow") or []),
        url_rewrite=tuple(rewrites),
        block=block,
        keep=_rules(filters.get("keep", []), "filters.keep"),
        max_age_days=max_age,
        drop_future=bool(filters.get("drop_future", False)),
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
    if rules.keep and not any(rule.matches(item) for rule in rules.keep):
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


def apply_rules(
    items: Sequence[ItemData], rules: EntryRules, now: datetime,
) -> tuple[list[ItemData], int]:
    """Rewrite then filter; returns the kept entries and how many were dropped."""
    kept = [item for item in judge(items, rules, now) if item is not None]
    return kept, len(items) - len(kept)


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


def summary_only(config: Mapping[str, Any], items: Sequence[ItemData]) -> list[ItemData]:
    """For a summary-only source (SPEC §14) entries keep no body, and say why."""
    if not config.get("summary_only"):
        return list(items)
    return [replace(it, body=None, raw={**it.raw, "summary_only": True}) for it in items]
