"""Text for the search index, queries against it, and highlighted snippets.

Pure functions, shared by every storage backend. The index sees title and body
as plain text (tags stripped, full-width ASCII folded) in which every run of two
or more CJK characters is rewritten as overlapping bigrams (``中国人`` becomes
``中国 国人``), and, in two more columns, the set of distinct CJK characters of
each. A word tokenizer (FTS5 ``unicode61``) then sees bigrams as words, so

* a query of two or more CJK characters is a phrase of bigrams (exact: no false
  positives from characters scattered over the text);
* a one-character query is one term of the character columns (no prefix scan
  over every bigram that starts with it, which is slow for common characters);
* Latin text is left to the word tokenizer (case and diacritics folded).

Queries go through the same rewrite, so index and query always agree. Changing
anything here changes the tokens: bump ``TOKENIZER_VERSION`` so that stored
indexes are rebuilt.
"""

from __future__ import annotations

import html
import operator
import re
from collections.abc import Iterable
from dataclasses import dataclass

from tidings.textutil import is_cjk

TOKENIZER_VERSION = "cjk-bigram-chars-4"

_CJK = ("\u3040-\u30fa\u30fc-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
        "\U00020000-\U0002fa1f")
_CJK_RUN = re.compile(f"([{_CJK}]+)")  # captured, so ``split`` keeps the runs
_DROP_BLOCKS = re.compile(r"<(script|style|template)\b.*?</\1\s*>|<!--.*?-->", re.S | re.I)
_BLOCK_START = re.compile(r"<(?:script|style|template)\b|<!--", re.I)
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>")
_INLINE = frozenset((
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "del", "dfn", "em", "font", "i",
    "ins", "kbd", "mark", "q", "rp", "rt", "ruby", "s", "samp", "small", "span", "strike",
    "strong", "sub", "sup", "time", "tt", "u", "var", "wbr"))


#: full-width ASCII (common in Chinese text) and the ideographic space, as ASCII;
#: cheaper than NFKC over whole documents and the case that matters for search
_FOLD = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
#: the folded characters that can change a token: full-width letters and digits. The
#: rest (punctuation, symbols, the ideographic space) separate words for the word
#: tokenizer either way, and ``translate`` costs a dict lookup per character
_FULLWIDTH_ALNUM = re.compile("[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")


def _tag_gap(match: re.Match[str]) -> str:
    """Inline tags join their neighbours (``<b>中</b>国`` is one word), others split."""
    return "" if match.group(2).lower() in _INLINE else " "


def html_to_text(markup: str) -> str:
    """The readable text of an HTML fragment, entities decoded."""
    if "<" not in markup and "&" not in markup:
        return markup
    return _tags_to_text(_DROP_BLOCKS.sub(" ", markup))


def _tags_to_text(markup: str) -> str:
    return html.unescape(_TAG.sub(_tag_gap, markup))


def _bigrams(run: str) -> str:
    if len(run) == 1:
        return f" {run} "
    return " " + " ".join(map(operator.add, run[:-1], run[1:])) + " "


def index_columns(text: str) -> tuple[str, str]:
    """Plain text rewritten for the word tokenizer (CJK runs as bigrams), and the
    distinct CJK characters of it in order of first appearance (deterministic,
    as deletes need: a set's order changes with the process's hash seed).

    One split finds the CJK runs for both; text with no CJK in it (checked in C
    with ``isascii`` for the common English case) is passed through untouched.
    """
    if text.isascii():
        return text, ""
    if _FULLWIDTH_ALNUM.search(text):
        text = text.translate(_FOLD)
    parts = _CJK_RUN.split(text)
    runs = parts[1::2]
    if not runs:
        return parts[0], ""
    parts[1::2] = map(_bigrams, runs)
    return "".join(parts), " ".join(dict.fromkeys("".join(runs)))


def document(title: str, body: str | None, summary: str) -> tuple[str, str, str, str]:
    """The indexed columns of an item: title, body, title characters, body characters."""
    title_words, title_chars = index_columns(title)
    body_words, body_chars = index_columns(html_to_text(body or summary))
    return title_words, body_words, title_chars, body_chars


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _has_word_chars(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


@dataclass(frozen=True, slots=True)
class TermPart:
    """One condition of a search term, for any backend to render.

    ``chars`` False: ``text`` is a phrase (words and CJK bigrams, space-separated) to
    find in the text columns, its last word a prefix when ``prefix``; ``chars`` True:
    ``text`` is one CJK character, looked up in the character columns.
    """

    text: str
    chars: bool = False
    prefix: bool = False


def term_parts(term: str) -> list[TermPart]:
    """One search term as conditions that must all hold (empty: no words in it).

    Words and CJK runs of two or more characters form a phrase over the text
    columns; a lone CJK character is looked up in the character columns, and
    splits the phrase around it (adjacency across it is not checked).
    """
    text = term.translate(_FOLD).strip()
    prefix = text.endswith("*")
    text = text.rstrip("*")
    parts: list[TermPart] = []
    buf: list[str] = []

    def flush(last: bool) -> None:
        phrase = " ".join("".join(buf).split())
        if _has_word_chars(phrase):
            parts.append(TermPart(phrase, prefix=last and prefix))
        buf.clear()

    pos = 0
    for m in _CJK_RUN.finditer(text):
        buf.append(text[pos:m.start()])
        run = m.group()
        if len(run) == 1:
            flush(last=False)
            parts.append(TermPart(run, chars=True))
        else:
            buf.append(" " + " ".join(map(operator.add, run[:-1], run[1:])) + " ")
        pos = m.end()
    buf.append(text[pos:])
    flush(last=True)
    return parts


def _term_parts(term: str, in_title: bool) -> list[str]:
    """One search term as FTS5 conditions (see :func:`term_parts`)."""
    words, chars = ("title", "title_chars") if in_title else ("{title body}",
                                                              "{title_chars body_chars}")
    return [f"{chars} : {_quote(p.text)}" if p.chars
            else f"{words} : ({_quote(p.text)}{' *' if p.prefix else ''})"
            for p in term_parts(term)]


def _term_expr(term: str, in_title: bool = False) -> str | None:
    parts = _term_parts(term, in_title)
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"


def searchable(term: str) -> bool:
    """Whether ``term`` has anything the index holds (letters, digits, CJK)."""
    return _term_expr(term) is not None


def match_expression(terms: Iterable[str], title_terms: Iterable[str] = (),
                     excluded: Iterable[str] = ()) -> str | None:
    """An FTS5 MATCH expression for all ``terms`` and ``title_terms``, none of ``excluded``."""
    required = [e for e in (_term_expr(t) for t in terms) if e]
    required += [e for e in (_term_expr(t, in_title=True) for t in title_terms) if e]
    if not required:
        return None
    expr = " AND ".join(required)
    for e in map(_term_expr, excluded):
        if e:
            expr = f"({expr}) NOT {e}"
    return expr


def exclusion_expression(excluded: Iterable[str]) -> str | None:
    """Any of ``excluded`` (used when a query has nothing but negations)."""
    found = [e for e in map(_term_expr, excluded) if e]
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
    """A window of ``text`` around its first match, escaped and highlighted.

    The window is cut from the text with its whitespace runs collapsed, a
    quarter of it before the match. Only the text near the match is collapsed:
    a search page makes 50 snippets of whole bodies, and collapsing each body
    entirely would be most of their cost. (Whitespace does not change where a match
    is: terms start and end at word characters and match any run between words.)
    """
    first = pattern.search(text) if pattern else None
    lead, window, tail = _window(text, 0 if first is None else first.start(), width)
    return ("…" if lead else "") + mark(window, pattern) + ("…" if tail else "")


def _window(text: str, at: int, width: int) -> tuple[bool, str, bool]:
    """Whether text comes before the window, the window at ``at`` (whitespace
    collapsed, a quarter of it before ``at``), and whether text follows it."""
    before, lead = _collapsed_tail(text, at, width // 4)
    after, tail = _collapsed_head(text, at, width - len(before))
    return lead, before + after, tail


#: characters at the end of a prefix's text that the rest of the markup may still
#: change (a cut entity, a word an inline tag would join): more than the longest entity
_UNSETTLED = 64


def html_snippet(markup: str, pattern: re.Pattern[str] | None, width: int = 180,
                 first: int = 2048) -> str:
    """:func:`snippet` of ``html_to_text(markup)``, converting only as much as it needs.

    Bodies run to tens of kilobytes and a search page makes 50 snippets, most of
    them near the start of their text; so the text of the first ``first``
    characters of markup is tried, and is enough when the window around its
    first match ends inside the part of it that the rest of the markup cannot
    change. Otherwise the whole markup is converted (a body that holds the terms
    only further on pays for the first try too). The result is the one the whole
    text gives unless the whole text's first match is over ``_UNSETTLED``
    characters long (a phrase spread over a long run of spaces): then the window
    may sit on the next match instead.
    """
    if len(markup) > first:
        text = _prefix_text(markup[:first])
        sure = text[:max(0, len(text) - _UNSETTLED)]
        found = pattern.search(sure) if pattern else None
        # a match starting near where ``sure`` ends might be cut short of a longer one
        # (and one starting before it, not found in ``sure``, might come first)
        if pattern is None or (found is not None and found.start() + _UNSETTLED < len(sure)):
            lead, window, tail = _window(sure, found.start() if found else 0, width)
            if tail:  # the window ends inside ``sure``: the whole text has the same one
                return ("…" if lead else "") + mark(window, pattern) + "…"
    return snippet(html_to_text(markup), pattern, width)


def _prefix_text(prefix: str) -> str:
    """The text of a prefix of some markup, as far as the rest cannot change it
    (but for the entity its end may cut): not a script, style or comment whose
    end is beyond it (their content would read as text), nor a tag it cuts."""
    pos = 0
    while (opened := _BLOCK_START.search(prefix, pos)) is not None:
        block = _DROP_BLOCKS.match(prefix, opened.start())
        if block is None:
            prefix = prefix[:opened.start()]
            break
        pos = block.end()
    dropped = _DROP_BLOCKS.sub(" ", prefix)
    cut = dropped.find("<", dropped.rfind(">") + 1)  # a "<" with no ">" after it
    return _tags_to_text(dropped if cut < 0 else dropped[:cut])


def _collapsed_tail(text: str, end: int, n: int) -> tuple[str, bool]:
    """The last ``n`` characters of ``text[:end]`` collapsed, with the space joining it to
    what follows; and whether more comes before them."""
    size = 4 * n + 16
    while True:
        start = max(0, end - size)
        chunk = text[start:end]
        joined = " ".join(chunk.split())  # a suffix of the collapsed text[:end]
        if joined and chunk[-1].isspace():
            joined += " "
        if len(joined) > n or start == 0:
            return joined[len(joined) - n:] if len(joined) > n else joined, len(joined) > n
        size *= 4


def _collapsed_head(text: str, start: int, n: int) -> tuple[str, bool]:
    """The first ``n`` characters of ``text[start:]`` collapsed; and whether more follows."""
    size = 2 * n + 16
    while True:
        joined = " ".join(text[start:start + size].split())  # a prefix of the collapsed rest
        if len(joined) > n or start + size >= len(text):
            return joined[:n], len(joined) > n
        size *= 4
