"""Title fingerprints (R-DEDUP-8)."""

from __future__ import annotations

import pytest

from tidings.identity import title_fingerprint

SAME = [
    ("OpenAI releases GPT-5", "openai releases gpt5"),
    ("OpenAI releases GPT-5", "  OpenAI   Releases: GPT 5!! "),
    ("ＧＰＴ－５ 发布", "GPT-5发布"),
    ("「重磅」苹果发布新品！", "【重磅】苹果发布新品"),
    ("苹果发布新品，售价9999元。", "苹果发布新品 售价9999元"),
    ("苹果\u3000发布？", "苹果发布"),
    ("《三体》第二季定档……", "“三体”第二季定档"),
    ("It’s “here” — finally…", "its here finally"),
    ("E\u0301tude N° 5", "étude n 5"),
]

DIFFERENT = [
    ("苹果发布新品", "苹果发布旧品"),
    ("GPT-5", "GPT-4"),
    ("Rust 2024", "Rust 2025"),
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_reprints_share_a_fingerprint(a: str, b: str) -> None:
    assert title_fingerprint(a) == title_fingerprint(b) != ""


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_different_titles_differ(a: str, b: str) -> None:
    assert title_fingerprint(a) != title_fingerprint(b)


@pytest.mark.parametrize("title", ["", "   ", "\u3000", "！？。，", "---"])
def test_empty_titles_have_no_fingerprint(title: str) -> None:
    assert title_fingerprint(title) == ""


def test_fingerprint_shape() -> None:
    fp = title_fingerprint("Hello")
    assert len(fp) == 32
    assert int(fp, 16) >= 0
