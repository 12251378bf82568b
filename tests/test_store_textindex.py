"""The pre-tokenizer of the search index: the columns it writes for a text."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from tidings.store.textindex import document, highlighter, index_columns, mark, snippet

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
