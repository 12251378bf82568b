"""Text for the search index, queries against it, and highlighted snippets.

Pure functions, shared by every storage backend. The index sees title and body
as plain text (tags stripped, NFKC-normalized) in which every run of CJK
characters is rewritten as overlapping bigrams followed by the run's last
character: ``中国人`` becomes ``中国 国人 人``. A word tokenizer (FTS5
``unicode61``) then sees CJK bigrams as words, so

* a query of two or more CJK characters is a phrase of bigrams (exact, no
  false positives from scattered characters);
* a one-character query is a prefix query (``人*`` matches the bigrams starting
  with it and the trailing character of a run), so it finds every occurrence;
* Latin text is left to the word tokenizer (case and diacritics folded).

Queries go through the same rewrite, so index and query always agree. Changing
anything here changes the tokens: bump ``TOKENIZER_VERSION`` so that stored
indexes are rebuilt.
"""

from __future__ import annotations

import html
import operator
import re
import unicodedata
from collections.abc import Iterable

from tidings.textutil import is_cjk

TOKENIZER_VERSION = "cjk-bigram-1"

_CJK = ("\u3040-\u30fa\u30fc-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
        "\U00020000-\U0002fa1f")
_CJK_RUN = re.compile(f"[{_CJK}]+")
_DROP_BLOCKS = re.compile(r"<(script|style|template)\b.*?</\1\s*>|<!--.*?-->", re.S | re.I)
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>")
_INLINE = frozenset((
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "del", "dfn", "em", "font", "i",
    "ins", "kbd", "mark", "q", "rp", "rt", "ruby", "s", "samp", "small", "span", "strike",
    "strong", "sub", "sup", "time", "tt", "u", "var", "wbr"))


def _tag_gap(match: re.Match[str]) -> str:
    """Inline tags join their neighbours (``<b>中</b>国`` is one word), others split."""
    return "" if match.group(2).lower() in _INLINE else " "


def html_to_text(markup: str) -> str:
    """The readable text of an HTML fragment, entities decoded."""
    if "<" not in markup and "&" not in markup:
        return markup
    text = _TAG.sub(_tag_gap, _DROP_BLOCKS.sub(" ", markup))
    return html.unescape(text)


def _index_run(match: re.Match[str]) -> str:
    run = match.group()
    if len(run) == 1:
        return f" {run} "
    return " " + " ".join(map(operator.add, run[:-1], run[1:])) + f" {run[-1]} "


def index_text(text: str) -> str:
    """Plain text rewritten for the word tokenizer (CJK runs as bigrams)."""
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    return _CJK_RUN.sub(_index_run, text)


def document(title: str, body: str | None, summary: str) -> tuple[str, str]:
    """The (title, body) pair that is indexed for an item."""
    return index_text(title), index_text(html_to_text(body or summary))


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _has_word_chars(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def term_match(term: str) -> str | None:
    """One search term (a word or a phrase) as an FTS5 phrase; None if it has no words.

    A CJK run inside a term is followed by its trailing character only when more
    words follow it in the term, because that is where the indexed text has it.
    """
    text = unicodedata.normalize("NFKC", term).strip()
    prefix = text.endswith("*")
    text = text.rstrip("*")
    if not _has_word_chars(text):
        return None
    parts: list[str] = []
    pos = 0
    for m in _CJK_RUN.finditer(text):
        parts.append(text[pos:m.start()])
        run = m.group()
        last = not _has_word_chars(text[m.end():])
        if len(run) == 1:
            prefix = prefix or last
            parts.append(f" {run} ")
        else:
            grams = " ".join(map(operator.add, run[:-1], run[1:]))
            parts.append(f" {grams} " if last else f" {grams} {run[-1]} ")
        pos = m.end()
    parts.append(text[pos:])
    phrase = _quote(" ".join("".join(parts).split()))
    return phrase + " *" if prefix else phrase


def match_expression(terms: Iterable[str], title_terms: Iterable[str] = (),
                     excluded: Iterable[str] = ()) -> str | None:
    """An FTS5 MATCH expression for all ``terms`` and ``title_terms``, none of ``excluded``."""
    required = [m for m in map(term_match, terms) if m]
    required += [f"title : {m}" for m in map(term_match, title_terms) if m]
    if not required:
        return None
    expr = " AND ".join(required)
    for m in map(term_match, excluded):
        if m:
            expr = f"({expr}) NOT {m}"
    return expr


def exclusion_expression(excluded: Iterable[str]) -> str | None:
    """Any of ``excluded`` (used when a query has nothing but negations)."""
    found = [m for m in map(term_match, excluded) if m]
    return " OR ".join(found) if found else None


# -------------------------------------------------------------------- snippets

def _term_pattern(term: str) -> str | None:
    stripped = term.strip()
    pieces = re.findall(r"[^\W_]+", stripped)
    if not pieces:
        return None
    head = "" if is_cjk(pieces[0][0]) else r"\b"
    tail = "" if stripped.endswith("*") or is_cjk(pieces[-1][-1]) else r"\b"
    return head + r"[\W_]+".join(re.escape(p) for p in pieces) + tail


def highlighter(terms: Iterable[str]) -> re.Pattern[str] | None:
    """One case-insensitive pattern matching any of the terms as they appear in text."""
    patterns = [p for p in map(_term_pattern, terms) if p]
    if not patterns:
        return None
    patterns.sort(key=len, reverse=True)
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.I)


def mark(text: str, pattern: re.Pattern[str] | None) -> str:
    """``text`` HTML-escaped, with every match of ``pattern`` wrapped in <mark>."""
    if pattern is None:
        return html.escape(text)
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(text):
        if m.end() == m.start():
            continue
        out.append(html.escape(text[pos:m.start()]))
        out.append(f"<mark>{html.escape(m.group())}</mark>")
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)


def snippet(text: str, pattern: re.Pattern[str] | None, width: int = 180) -> str:
    """A window of ``text`` around its first match, escaped and highlighted."""
    text = " ".join(text.split())
    first = pattern.search(text) if pattern else None
    start = 0 if first is None else max(0, first.start() - width // 4)
    window = text[start:start + width]
    lead = "…" if start > 0 else ""
    tail = "…" if start + width < len(text) else ""
    return lead + mark(window, pattern) + tail
