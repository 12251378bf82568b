"""Entries out of a JSON document or a page that embeds one (R-JSON-1...3).

Pure. The list is found (the document itself, ``window_var`` or ``json_key`` in
an HTML page), ``items_path`` leads to the array, and each entry is mapped by
the field paths. Loud where a rule finds nothing: no array at ``items_path``,
a window var or key that is not there or never closes, and - R-JSON-3 - a list
with entries of which none maps (the fields named are not where the config
says), or whose dates are all in another format than ``date_unit``.
Entries dropped by ``require_boolean`` / ``min_numeric`` are the source's own
choice and are not errors.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from tidings.errors import ParseError
from tidings.model import BodyState, ItemData
from tidings.readers.jsonlist.config import JsonListConfig
from tidings.readers.jsonlist.embedded import embedded_json
from tidings.readers.jsonlist.paths import fill_template, get_path
from tidings.readers.rss.dates import parse_date
from tidings.textutil import collapse_ws, short_summary, shorten

# Epochs outside this range are not dates of entries (ms read as s, a zero).
_MIN_EPOCH, _MAX_EPOCH = 86_400, 4_102_444_800  # 1970-01-02 .. 2100-01-01


@dataclass(slots=True)
class ParsedJson:
    items: list[ItemData] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    entries: int = 0
    filtered: int = 0


def parse_json_list(text: str, url: str, config: JsonListConfig) -> ParsedJson:
    """The entries of ``text`` (the document fetched from ``url``)."""
    data = _document(text, url, config)
    entries = get_path(data, config.items_path) if config.items_path else data
    where = f"items_path {config.items_path!r}" if config.items_path else "the document"
    if not isinstance(entries, list):
        got = "nothing" if entries is None else type(entries).__name__
        raise ParseError(f"{url}: {where}: expected an array, found {got}", url)
    out = ParsedJson(entries=len(entries))
    misses: Counter[str] = Counter()
    dates = bad_dates = 0
    plan = _Plan.of(config)
    for entry in entries:
        if (plan.require or plan.least) and not _kept(entry, plan):
            out.filtered += 1
            continue
        item, miss = _map(entry, plan)
        if item is None:
            misses[miss] += 1
            continue
        if item.published_raw is not None:
            dates += 1
            bad_dates += item.published_at is None
        out.items.append(item)
    kept = out.entries - out.filtered
    if kept and not out.items:
        why = "; ".join(f"{what} in {n}" for what, n in misses.most_common(2))
        raise ParseError(f"{url}: {kept} entries under {where}, none mapped ({why})", url)
    if misses:
        out.warnings.append(f"{sum(misses.values())} entries not mapped "
                            f"({misses.most_common(1)[0][0]})")
    if dates and bad_dates == dates:
        first = get_path(entries[0], config.date) if config.date else None
        raise ParseError(f"{url}: date {config.date!r}: no value read as {config.date_unit} "
                         f"(first: {str(first)[:40]!r})", url)
    if bad_dates:
        out.warnings.append(f"{bad_dates} dates of {config.date!r} not read as "
                            f"{config.date_unit}")
    return out


def _document(text: str, url: str, config: JsonListConfig) -> Any:
    if config.window_var or config.json_key:
        return embedded_json(text, url, window_var=config.window_var, json_key=config.json_key)
    try:
        return json.loads(text)
    except ValueError as exc:
        head = collapse_ws(text[:60])
        raise ParseError(f"{url}: not JSON ({exc}; starts {head!r})", url) from None


@dataclass(frozen=True, slots=True)
class _Plan:
    """The config's field rules read once per page: a pydantic attribute costs several
    times a plain one, and the mapping reads them for every entry."""

    url: str | None
    template: str | None
    title: str
    date: str | None
    unit: str
    summary: str | None
    id: str | None
    author: str | None
    require: tuple[tuple[str, bool], ...]
    least: tuple[tuple[str, int | float], ...]

    @classmethod
    def of(cls, config: JsonListConfig) -> _Plan:
        return cls(config.url, config.url_template, config.title, config.date,
                   config.date_unit, config.summary, config.id, config.author,
                   tuple(config.require_boolean.items()), tuple(config.min_numeric.items()))


def _kept(entry: Any, plan: _Plan) -> bool:
    for path, wanted in plan.require:
        if get_path(entry, path) is not wanted:
            return False
    for path, least in plan.least:
        value = get_path(entry, path)
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                return False
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < least:
            return False
    return True


def _map(entry: Any, plan: _Plan) -> tuple[ItemData | None, str]:
    """The entry as an item, or None and what was missing."""
    if not isinstance(entry, dict):
        return None, f"an entry that is a {type(entry).__name__}, not an object"
    if plan.template:
        link = fill_template(plan.template, entry)
        if link is None:
            return None, f"a field of url_template {plan.template!r} missing"
    else:
        assert plan.url is not None
        value = get_path(entry, plan.url)
        link = value.strip() if isinstance(value, str) else None
        if not link or not link.startswith(("http://", "https://")):
            return None, f"url {plan.url!r} missing or not an http(s) URL"
    title = _text(get_path(entry, plan.title))
    if not title:
        return None, f"title {plan.title!r} missing"
    raw_date = get_path(entry, plan.date) if plan.date else None
    ident = get_path(entry, plan.id) if plan.id else None
    return ItemData(
        title=title, url=link, guid=str(ident) if ident not in (None, "") else None,
        summary=_summary(get_path(entry, plan.summary)) if plan.summary else "",
        author=_text(get_path(entry, plan.author)) if plan.author else "",
        published_at=read_date(raw_date, plan.unit),
        published_raw=str(raw_date) if raw_date not in (None, "") else None,
        body=None, body_state=BodyState.PENDING,
    ), ""


def _text(value: Any) -> str:
    if type(value) is str:  # the usual case, ahead of the isinstance chain
        return collapse_ws(value)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return collapse_ws(str(value))
    if isinstance(value, dict):  # {"rendered": "…"} (WordPress), {"text": "…"}
        for key in ("rendered", "text", "name", "value"):
            if isinstance(value.get(key), str):
                return collapse_ws(value[key])
    return ""


def _summary(value: Any) -> str:
    if type(value) is str:
        return short_summary(value)
    return shorten(_text(value))


def read_date(value: Any, unit: str) -> datetime | None:
    """``value`` read as ``unit``; None when it is not one."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) or (isinstance(value, str) and len(value) <= 64):
        return read_scalar_cached(value, unit)
    return _read_date(value, unit)


def _read_date(value: Any, unit: str) -> datetime | None:
    if unit in ("epoch_s", "epoch_ms"):
        try:
            seconds = float(value) / (1000 if unit == "epoch_ms" else 1)
        except (TypeError, ValueError):
            return None
        if not _MIN_EPOCH <= seconds <= _MAX_EPOCH:
            return None
        return datetime.fromtimestamp(seconds, UTC)
    text = str(value).strip()
    if unit == "yyyymmdd":
        digits = text.replace("-", "")
        if len(digits) != 8 or not digits.isdigit():
            return None
        try:
            return datetime(int(digits[:4]), int(digits[4:6]), int(digits[6:]), tzinfo=UTC)
        except ValueError:
            return None
    if not isinstance(value, str):
        return None
    return parse_date(text)


# A list is fetched again and again, and its entries' dates come back the same each
# time. ``typed``: ``20260926`` and ``20260926.0`` read differently.
read_scalar_cached = lru_cache(maxsize=2048, typed=True)(_read_date)
