"""Content hashes (R-DEDUP-4) and lossy equality (R-DEDUP-6)."""

from __future__ import annotations

import hashlib
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tidings.identity import comparable_text, content_hash, lossy_equal

R = "\ufffd"


def test_comparable_text_collapses_whitespace_per_part() -> None:
    assert comparable_text(" A  title\n", "<p>body\u3000text</p>", "sum\tmary ") == (
        "A title\n<p>body text</p>\nsum mary"
    )
    assert comparable_text("T", None, "") == "T\n\n"


def test_content_hash_is_sha256_of_the_comparable_text() -> None:
    expected = hashlib.sha256(b"T\nB\nS").hexdigest()
    assert content_hash("T", "B", "S") == expected
    assert content_hash(" T ", "B\n\n", "  S") == expected


def test_content_hash_sees_real_changes() -> None:
    base = content_hash("Title", "Body", "Summary")
    assert content_hash("Title", "Body!", "Summary") != base
    assert content_hash("Title Body", None, "Summary") != content_hash("Title", "Body", "Summary")
    assert content_hash("Title", None, "") != content_hash("Title", "", "x")


def test_content_hash_ignores_unicode_composition() -> None:
    assert content_hash("Cafe\u0301", None, "") == content_hash("Caf\u00e9", None, "")


LOSSY = [
    ("abc", "abc", True),
    ("abc", "abd", False),
    (f"a{R}c", "abc", True),
    ("abc", f"a{R}c", True),
    (f"{R}{R}{R}", "xyz", True),
    (f"a{R}c", f"a{R}d", False),
    (f"a{R}", "ab", True),
    (f"{R}b", "ab", True),
    (f"a{R}c", "abbc", False),  # one hole is one character
    ("", "", True),
    (R, "", False),
    (f"中{R}文章", "中文文章", True),
    (f"x{R}z", f"{R}y{R}", True),
]


@pytest.mark.parametrize(("a", "b", "expected"), LOSSY)
def test_lossy_equal_table(a: str, b: str, expected: bool) -> None:
    assert lossy_equal(a, b) is expected
    assert lossy_equal(b, a) is expected


_text = st.text(alphabet=st.sampled_from([*"ab中 ", R]), max_size=40)


@given(_text)
def test_lossy_equal_reflexive(a: str) -> None:
    assert lossy_equal(a, a)


@given(_text, _text)
def test_lossy_equal_symmetric_and_matches_definition(a: str, b: str) -> None:
    expected = len(a) == len(b) and all(x == y or R in (x, y) for x, y in zip(a, b, strict=False))
    assert lossy_equal(a, b) is expected
    assert lossy_equal(b, a) is expected


@given(st.text(max_size=50), st.data())
def test_punching_holes_keeps_equality(text: str, data: st.DataObject) -> None:
    holes = data.draw(st.sets(st.integers(0, max(len(text) - 1, 0)), max_size=5))
    damaged = "".join(R if i in holes else ch for i, ch in enumerate(text))
    assert lossy_equal(text, damaged)


def test_lossy_equal_is_fast_on_long_bodies() -> None:
    body = "lorem ipsum dolor sit amet " * 40_000  # ~1 MB
    damaged = body[:500] + R + body[501:-10] + R + body[-9:]
    start = time.perf_counter()
    for _ in range(20):
        assert lossy_equal(body, damaged)
        assert not lossy_equal(body, damaged[:-1] + "!")
    assert time.perf_counter() - start < 1.0
