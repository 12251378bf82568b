"""The search index: one ``tsvector`` document per item, built in Python.

tidings' own rewrite (``tidings.store.textindex``: tags stripped, CJK runs as
bigrams, distinct CJK characters in their own columns) makes the tokens; this
module only cuts them into words the way SQLite's ``unicode61`` does (letters and
digits, case and diacritics folded) and writes them as a ``tsvector`` literal, so
PostgreSQL's own parser and dictionaries never see the text: index and query are
cut by the same function, and both backends find the same items.

The four columns become weights (A title words, B title characters, C body
words, D body characters) over one position space, with a gap between columns so
that no phrase matches across two of them. PostgreSQL keeps positions up to
16,383: words beyond that in a very long body are still found, but phrases there
are not. Items with ``search_dirty = 1`` wait for the index job, which builds the
documents away from the writer (``store/searchindex.py``); its write step locks
the batch's rows ``FOR NO KEY UPDATE SKIP LOCKED`` (unlike ``FOR UPDATE`` it lets
the foreign key check of a discovery of those items through, so a worker
recording a wire reprint never waits for it) and stores only the documents of
items unchanged since they were read.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

from tidings.store.postgres._db import Access, insert_values
from tidings.store.searchindex import IndexDoc, IndexInput
from tidings.store.textindex import document, term_parts

_WORD = re.compile(r"[^\W_]+")
_MAX_POS = 16_383
_MAX_POSITIONS = 256  # per lexeme, as PostgreSQL keeps
_MAX_LEXEME = 500  # characters; PostgreSQL refuses lexemes of 2 KB
_GAP = 2
#: weights in ts_rank's order {D, C, B, A}: title columns count ten times the body's
RANK_WEIGHTS = "{0.1, 0.1, 1.0, 1.0}"
_HOUR_US = 3_600_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: ``time_lexeme`` in SQL, of the expression ``{col}`` (the hour migration and the benchmark
#: archive's copies of documents write it)
TIME_LEXEME_SQL = ("'~' || to_char(to_timestamp(({col} - (({col} % 3600000000) + 3600000000) "
                   "% 3600000000) / 1000000) AT TIME ZONE 'UTC', 'YYYYMMDDHH24')")


def fold(text: str) -> str:
    """Case and diacritics folded, as ``unicode61 remove_diacritics 2`` does."""
    if text.isascii():
        return text.lower()
    stripped = "".join(ch for ch in unicodedata.normalize("NFD", text)
                       if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", stripped).lower()


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(fold(text)) if len(w) <= _MAX_LEXEME]


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _hour(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us - us % _HOUR_US)


def _stamp(d: datetime, length: int) -> str:
    """``~YYYYMMDDHH`` cut to ``length`` characters (month, day or hour)."""
    return f"~{d.year:04d}{d.month:02d}{d.day:02d}{d.hour:02d}"[:length]


def time_lexeme(sort_time: int) -> str:
    """The hour of ``sort_time`` (UTC) as a lexeme no word can be (words are letters
    and digits): newest-first search asks for matches of the last hours, days,
    months first (``time_windows``), and the GIN index intersects them."""
    return _stamp(_hour(sort_time), 11)


def time_windows(newest: int) -> list[str]:
    """``tsquery`` parts of growing spans of time up to the hour of ``newest``: the
    last 4 hours, the last 2 days, the last 2 months (UTC). Each covers every item
    from its start on, so the newest matches in a span that holds enough of them
    are the newest of all."""
    hour = _hour(newest)
    hours = [_stamp(hour - timedelta(hours=n), 11) for n in range(4)]
    days = [_stamp(hour - timedelta(days=n), 9) for n in range(2)]
    first = hour.replace(day=1)
    months = [_stamp(first, 7), _stamp((first - timedelta(days=1)), 7)]
    return [" | ".join(_quote(h) for h in hours),
            " | ".join(f"{_quote(d)}:*" for d in days),
            " | ".join(f"{_quote(m)}:*" for m in months)]


def tsvector(title: str, body: str | None, summary: str, sort_time: int) -> str:
    """The ``tsvector`` literal of an item (see the module docstring), with the
    lexeme of its hour (``time_lexeme``)."""
    title_words, body_words, title_chars, body_chars = document(title, body, summary)
    entries: dict[str, list[str]] = {}
    pos = 0
    for text, weight in ((title_chars, "B"), (title_words, "A"), (body_chars, "D"),
                         (body_words, "C")):
        for word in words(text):
            pos += 1
            spots = entries.setdefault(word, [])
            if len(spots) < _MAX_POSITIONS and (pos <= _MAX_POS or not spots
                                                or not spots[-1].endswith(weight)):
                spots.append(f"{min(pos, _MAX_POS)}{weight}")
        pos += _GAP
    return " ".join([*(f"{_quote(w)}:{','.join(spots)}" for w, spots in entries.items()),
                     _quote(time_lexeme(sort_time))])


def _part(text: str, chars: bool, prefix: bool, in_title: bool, weighted: bool) -> str | None:
    weights = ("B" if in_title else "BD" if weighted else "") if chars else (
        "A" if in_title else "AC" if weighted else "")
    tokens = words(text)
    if not tokens:
        return None
    rendered = [f"{_quote(t)}{':' + weights if weights else ''}" for t in tokens]
    if prefix:
        rendered[-1] = f"{_quote(tokens[-1])}:*{weights}"
    return "(" + " <-> ".join(rendered) + ")"


def _term(term: str, in_title: bool = False, weighted: bool = False) -> str | None:
    parts = [p for p in (_part(tp.text, tp.chars, tp.prefix, in_title, weighted)
                         for tp in term_parts(term)) if p]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "(" + " & ".join(parts) + ")"


def tsquery(terms: Iterable[str], title_terms: Iterable[str] = (),
            excluded: Iterable[str] = (), weighted: bool = False) -> str | None:
    """A ``tsquery`` literal: all ``terms`` and ``title_terms``, none of ``excluded``
    (the same conditions as ``textindex.match_expression`` builds for FTS5).

    Only title terms need weights to match the same items: a phrase (words, CJK
    bigrams) is never found in the character columns, which hold lone CJK
    characters only, and a character found as a word (a one-character run) is in
    the character columns too. A GIN index does not store weights, so a weighted
    query makes PostgreSQL recheck every candidate against its document (read from
    TOAST); ``weighted`` is for ``ts_rank``, which scores title and body apart.
    """
    required = [e for e in (_term(t, weighted=weighted) for t in terms) if e]
    required += [e for e in (_term(t, in_title=True) for t in title_terms) if e]
    if not required:
        return None
    expr = " & ".join(required)
    for e in (_term(t, weighted=weighted) for t in excluded):
        if e:
            expr = f"({expr}) & !{e}"
    return expr


def exclusion_query(excluded: Iterable[str]) -> str | None:
    """Any of ``excluded`` (a query with nothing but negations)."""
    found = [e for e in map(_term, excluded) if e]
    return " | ".join(found) if found else None


class SearchIndexMixin(Access):

    def index_inputs(self, limit: int) -> list[IndexInput]:
        with self._read() as conn:
            return [IndexInput(*r) for r in conn.execute(
                "SELECT id, sort_time, title, body, summary FROM items WHERE search_dirty = 1 "
                "ORDER BY id LIMIT ?", (limit,)).fetchall()]

    def build_index(self, inputs: Sequence[IndexInput]) -> list[IndexDoc]:
        return [IndexDoc(x, (tsvector(x.title, x.body, x.summary, x.sort_time),))
                for x in inputs]

    def write_index(self, docs: Sequence[IndexDoc]) -> int:
        with self._write() as conn:
            rows = conn.execute(
                "SELECT id, sort_time, title, body, summary FROM items WHERE id = ANY(?) "
                "AND search_dirty = 1 ORDER BY id FOR NO KEY UPDATE SKIP LOCKED",
                ([d.source.item_id for d in docs],)).fetchall()
            current = {r[0]: tuple(r[1:]) for r in rows}
            fresh = [d for d in docs if current.get(d.source.item_id) == d.source.text()]
            if not fresh:
                return 0
            insert_values(
                conn, "INSERT INTO item_search (item_id, sort_time, doc)",
                [(d.source.item_id, d.source.sort_time, d.columns[0]) for d in fresh],
                "ON CONFLICT (item_id) DO UPDATE SET sort_time = excluded.sort_time, "
                "doc = excluded.doc", chunk=500)
            conn.execute("UPDATE items SET search_dirty = 0 WHERE id = ANY(?)",
                         ([d.source.item_id for d in fresh],))
            return len(fresh)

    def index_pending(self, limit: int = 5000) -> int:
        return self.write_index(self.build_index(self.index_inputs(limit)))

    def unindexed_count(self) -> int:
        with self._read() as conn:
            (n,) = conn.row("SELECT count(*) FROM items WHERE search_dirty = 1")
            return int(n)
