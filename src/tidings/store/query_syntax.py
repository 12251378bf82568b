"""The search box syntax (R-API-5), parsed into a :class:`SearchQuery`.

    words "a phrase" 中文 "中文短语"  every word and phrase must match
    -word -"a phrase"                  must not match
    intitle:word intitle:"a phrase"    must match in the title
    author:name author:"Full Name"     by this author (exact)
    source:source-id                   from this source
    date:2024-01-01                    that day (UTC)
    date:2024-01-01..2024-02-01        both days included; either end may be left open
    date:>=2024-01-01 date:<2024-02-01 (also > and <=)

A word with any other ``name:`` prefix is an ordinary word (URLs stay searchable).
Mistakes raise ConfigError with a one-line message naming the problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from tidings.errors import BadValueError, ConfigError
from tidings.store.base import SearchQuery
from tidings.store.textindex import searchable

_QUOTES = {'"': '"', "\u201c": "\u201d", "\u300c": "\u300d"}
_OPERATORS = ("intitle", "author", "source", "date")
_DAY = timedelta(days=1)
_COMPARE = re.compile(r"^(>=|<=|>|<)(.+)$")
#: control characters end the full-text engine's strings early (a NUL in ``intitle:``
#: made SQLite answer "unterminated string"): refused, as the web edge does
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass
class _Parts:
    terms: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    title_terms: list[str] = field(default_factory=list)
    author: str | None = None
    source_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    has_date: bool = False


def _tokens(text: str) -> list[str]:
    """Split on whitespace; quoted stretches (spaces and all) stay whole."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        start = i
        while i < n and not text[i].isspace():
            close = _QUOTES.get(text[i])
            if close is None:
                i += 1
                continue
            end = text.find(close, i + 1)
            if end < 0:
                raise ConfigError(f"search: unclosed quote at position {i + 1}")
            i = end + 1
        out.append(text[start:i])
    return out


def _unquote(value: str) -> str:
    if value and value[0] in _QUOTES and value.endswith(_QUOTES[value[0]]) and len(value) > 1:
        return value[1:-1].strip()
    return value


def _day(value: str) -> datetime:
    try:
        return datetime.combine(date.fromisoformat(value.strip()), datetime.min.time(), UTC)
    except ValueError:
        raise ConfigError(f"search: {value!r} is not a date like 2024-01-31") from None


def _dates(value: str) -> tuple[datetime | None, datetime | None]:
    """A date: value as [since, until) in UTC."""
    compare = _COMPARE.match(value)
    if compare:
        op, day = compare.group(1), _day(compare.group(2))
        return {">=": (day, None), ">": (day + _DAY, None),
                "<": (None, day), "<=": (None, day + _DAY)}[op]
    if ".." in value:
        first, _, last = value.partition("..")
        if not first and not last:
            raise ConfigError("search: date: range needs at least one end")
        since = _day(first) if first else None
        until = _day(last) + _DAY if last else None
        if since and until and since >= until:
            raise ConfigError(f"search: date range {value} ends before it starts")
        return since, until
    day = _day(value)
    return day, day + _DAY


def _operator(parts: _Parts, name: str, value: str) -> None:
    if not value:
        raise ConfigError(f"search: {name}: needs a value")
    if name == "intitle":
        parts.title_terms.append(value)
    elif name == "author":
        if parts.author is not None:
            raise ConfigError("search: only one author: per query")
        parts.author = value
    elif name == "source":
        if parts.source_id is not None:
            raise ConfigError("search: only one source: per query")
        parts.source_id = value
    else:
        if parts.has_date:
            raise ConfigError("search: only one date: per query (use a range a..b)")
        parts.has_date = True
        parts.since, parts.until = _dates(value)


def _require_something(text: str, parts: _Parts) -> None:
    """Refuse a query that would match everything because nothing in it can be searched
    (``🙂``, ``*``, ``()``, blanks): a user who typed it wanted something specific."""
    wanted = [*parts.terms, *parts.title_terms]
    filters = (parts.author, parts.source_id, parts.has_date or None)
    if (wanted and not any(map(searchable, wanted))) or (
            not wanted and not any(map(searchable, parts.excluded))
            and not any(f is not None for f in filters)):
        raise BadValueError(f"search: nothing to search for in {text.strip()!r}: "
                          "type a word, a number or a CJK character")


def parse_search(text: str, *, ranked: bool = False, limit: int = 50) -> SearchQuery:
    """Parse what a user typed into the search box."""
    if _CONTROL.search(text):
        raise ConfigError("search: control characters are not allowed")
    parts = _Parts()
    for token in _tokens(text):
        negated = token.startswith("-") and len(token) > 1
        body = token[1:] if negated else token
        name, colon, value = body.partition(":")
        if colon and name.lower() in _OPERATORS and body[0] not in _QUOTES:
            if negated:
                raise ConfigError(f"search: {name}: cannot be negated")
            _operator(parts, name.lower(), _unquote(value))
            continue
        word = _unquote(body)
        if word and word != "-":
            (parts.excluded if negated else parts.terms).append(word)
    _require_something(text, parts)
    return SearchQuery(
        terms=tuple(parts.terms), excluded=tuple(parts.excluded),
        title_terms=tuple(parts.title_terms), author=parts.author, source_id=parts.source_id,
        since=parts.since, until=parts.until, ranked=ranked, limit=limit)

