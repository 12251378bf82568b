"""The pre-tokenizer of the search index: the columns it writes for a text."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from tidings.store.textindex import (
    document,
    highlighter,
    html_snippet,
    html_to_text,
    index_columns,
    mark,
    snippet,
)

#: a word as FTS5 ``unicode61`` sees one: letters and digits, case folded
_WORD = re.compile(r"[^\W_]+")
_FULL_FOLD = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}

_ALPHABET = st.sampled_from(
    [*"ab Z9,.-_", "中", "国", "人", "学", "。", "，", "\u3000", "Ａ", "ｚ", "０", "！", "＿", "（",
     "）", "ア", "한"])


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_folding_only_letters_and_digits_gives_the_words_of_a_full_fold(text: str) -> None:
    """Full-width punctuation and the ideographic space are left as they are (a
    cheap check replaces a translate of every document); the tokenizer must
    still see exactly the words a fold of all full-width ASCII would give it."""
    words, chars = index_columns(text)
    folded_words, folded_chars = index_columns(text.translate(_FULL_FOLD))
    assert _words(words) == _words(folded_words)
    assert chars == folded_chars


def test_columns_of_a_mixed_text() -> None:
    words, chars = index_columns("ＧＰＴ４发布，价格　降低了iPhone手机")
    assert _words(words) == ["gpt4", "发布", "价格", "降低", "低了", "iphone", "手机"]
    assert chars == "发 布 价 格 降 低 了 手 机"  # first appearance order, each once


def test_a_document_is_the_same_in_every_process() -> None:
    """Deletes from the contentless index re-derive the columns, maybe in another
    process: they must not depend on the hash seed (a set's order would)."""
    args = ("天天向上，学而时习之", "<p>好好学习，<b>天天</b>向上。温故而知新</p>", "")
    script = ("import json, sys; from tidings.store.textindex import document; "
              f"print(json.dumps(document(*{args!r})))")
    seen = set()
    for seed in ("1", "2", "3"):
        out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                             text=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        seen.add(tuple(json.loads(out)))
    assert seen == {document(*args)}


def _snippet_of_the_whole_text(text: str, pattern: re.Pattern[str] | None, width: int) -> str:
    """The definition: collapse every whitespace run, then cut the window."""
    text = " ".join(text.split())
    first = pattern.search(text) if pattern else None
    start = 0 if first is None else max(0, first.start() - width // 4)
    window = text[start:start + width]
    return ("…" if start > 0 else "") + mark(window, pattern) + \
        ("…" if start + width < len(text) else "")


_PIECES = st.sampled_from(["ab", "cd", "x", "中文", "人工智能", "a-b", "<&>", " ", "  ", "\n\t ",
                           "\u3000", ".", "ab cd"])


@given(st.lists(_PIECES, max_size=120).map("".join),
       st.lists(st.sampled_from(["ab", "cd", "中文", "智能", "a b", "x*"]), max_size=2),
       st.integers(min_value=1, max_value=60))
def test_snippets_collapse_only_near_the_match_but_equal_the_whole_text_cut(
        text: str, terms: list[str], width: int) -> None:
    pattern = highlighter(terms)
    assert snippet(text, pattern, width) == _snippet_of_the_whole_text(text, pattern, width)


#: pieces of hostile markup: tags cut or left open, comments and scripts (closed or
#: not), entities, inline tags that join words
_MARKUP = st.sampled_from([
    "ab", "cd", "x", "中文", "人工智能", " ", "   ", "\n\t", "<p>", "</p>", "<b>", "</b>", "<br/>",
    '<a href="ab">', "</a>", "<a title='<b'>", "<!-- ab -->", "<!--", "-->", "<script>ab</script>",
    "<script>", "</script>", "<STYLE>cd</style>", "&amp;", "&lt;b&gt;", "&am", "&#x4e2d;", "&#0000",
    "<", ">", "<scr", "<!-", "a<b>b</b>", "ab-cd"])
#: what a prefix may cut through: all longer than the few characters of text at a
#: prefix's end, and holding terms that the whole text does not show there
_HAZARDS = st.sampled_from([
    '<a title="' + "ab " * 100 + '">', "<script>" + " cd" * 100 + "</script>",
    "<!--" + " ab" * 100 + "-->", "<style>" + " 中文" * 100, "&CounterClockwiseContourIntegral;",
    "&#" + "0" * 70 + "65;", "ab" * 40, "<b>" + "ab" * 20 + "</b>" + "cd" * 20])


@st.composite
def _cut_markup(draw: st.DrawFn) -> tuple[str, int]:
    """Markup, and a prefix length that ends inside one of its hazards."""
    head = "".join(draw(st.lists(_MARKUP, max_size=30)))
    hazard = draw(_HAZARDS)
    tail = "".join(draw(st.lists(st.one_of(_MARKUP, _HAZARDS), min_size=5, max_size=60)))
    return head + hazard + tail, draw(st.integers(len(head), len(head) + len(hazard)))


@settings(max_examples=500, deadline=None)
@given(_cut_markup(),
       st.lists(st.sampled_from(["ab", "cd", "中文", "智能", "a b", "x*", "b", "ab cd ab"]),
                max_size=2),
       st.integers(min_value=4, max_value=120))
def test_a_snippet_from_a_prefix_of_the_markup_is_the_one_of_the_whole_text(
        cut: tuple[str, int], terms: list[str], width: int) -> None:
    """Whatever the prefix cuts, the window is the whole text's, but where the
    whole text's first match is longer than the part of a prefix left unsure."""
    markup, first = cut
    pattern = highlighter(terms)
    text = html_to_text(markup)
    match = pattern.search(text) if pattern else None
    if match is None or len(match.group()) <= 64:
        assert html_snippet(markup, pattern, width, first) == snippet(text, pattern, width)


def test_a_snippet_of_a_long_body_needs_only_its_start() -> None:
    body = "<p>An open model, released today.</p>" + "<p>More text follows here.</p>" * 2000
    pattern = highlighter(["model"])
    cut = html_snippet(body, pattern)
    assert cut == snippet(html_to_text(body), pattern)
    assert cut.startswith("An open <mark>model</mark>, released today.") and cut.endswith("…")


def test_the_unsure_end_of_a_prefix_is_never_shown() -> None:
    """A prefix's text ends in a cut entity, in fewer characters than are left
    unsure; a window from the start (a search by filters only) would show it."""
    markup = "aaaa " * 8 + "&CounterClockwiseContourIntegral; more" + " words" * 100
    first = markup.index("Contour")  # 57 characters of text, the last 17 a cut entity
    whole = snippet(html_to_text(markup), None, 45)
    assert "∳" in whole
    assert html_snippet(markup, None, 45, first) == whole


def test_a_match_cut_by_the_unsure_end_is_not_taken_for_a_later_one() -> None:
    """The sure part of a prefix ends inside the phrase "ab cd ab": "cd" is the
    first match in that part, but the whole text's first match is the phrase."""
    head = "zz " * 10
    markup = head + "ab cd ab" + " yy" * 200
    pattern = highlighter(["ab cd ab", "cd"])
    first = len(head) + len("ab cd a") + 64
    whole = snippet(markup, pattern, 4)
    assert whole == "… ab …"  # the window at the phrase (too narrow to mark it whole)
    assert html_snippet(markup, pattern, 4, first) == whole
