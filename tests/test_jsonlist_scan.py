"""The bracket scanner and the flight-payload decoder against hostile JSON (R-JSON-2)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tidings.readers.jsonlist.scan import (
    ScanError,
    find_key,
    flight_chunks,
    value_end,
    window_var,
)

HOSTILE = st.sampled_from(['"', "\\", "</script>", "\\u0022", "{", "}", "[", "]", "'", "`",
                           "\\\"", "\n", "\u2028", "🚀", '"posts":[1]', "self.__next_f"])
TEXT = st.lists(st.one_of(HOSTILE, st.text(max_size=8)), max_size=6).map("".join)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), TEXT,
                    st.floats(allow_nan=False, allow_infinity=False))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)), max_leaves=20)
CONTAINERS = st.one_of(st.lists(JSON, max_size=4), st.dictionaries(TEXT, JSON, max_size=4))


@settings(max_examples=300, deadline=None)
@given(value=CONTAINERS, ascii_only=st.booleans(), tail=TEXT)
def test_the_scanner_ends_exactly_where_json_dumps_ends(value: Any, ascii_only: bool,
                                                         tail: str) -> None:
    dumped = json.dumps(value, ensure_ascii=ascii_only)
    text = "var x = " + dumped + ";" + tail
    assert value_end(text, len("var x = ")) == len("var x = ") + len(dumped)


@settings(max_examples=200, deadline=None)
@given(value=CONTAINERS, tail=TEXT)
def test_a_window_var_comes_back_whole(value: Any, tail: str) -> None:
    text = f"window.__INITIAL_STATE__ = {json.dumps(value)};{json.dumps(tail)}"
    assert window_var(text, "__INITIAL_STATE__") == value


@settings(max_examples=200, deadline=None)
@given(value=CONTAINERS, noise=st.dictionaries(TEXT, JSON, max_size=3),
       cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=3))
def test_the_flight_decoder_finds_the_key_across_chunks(value: Any, noise: dict[str, Any],
                                                        cuts: list[int]) -> None:
    noise.pop("posts", None)
    rows = f'0:{json.dumps(noise)}\n5:{{"posts":{json.dumps(value)}}}\n'
    points = sorted({min(c, len(rows)) for c in cuts})
    pieces = [rows[a:b] for a, b in zip([0, *points], [*points, len(rows)], strict=True)]
    script = "".join(f"self.__next_f.push({json.dumps([1, p])})" for p in pieces)
    decoded = "".join(flight_chunks(script))
    assert decoded == rows
    assert find_key(decoded, "posts") == value


@pytest.mark.parametrize(("text", "reason"), [
    ("window.S = {\"a\": [1, 2}", "mismatched"),
    ("window.S = {\"a\": \"never closes}", "never closes (a string still open)"),
    ("window.S = {\"a\": [1, 2]", "never closes (1 brackets still open)"),
    ("window.S = 42;", "no object or array"),
    ("window.T = {};", "no assignment to window.S"),
    ("window.S = {a: 1};", "is not JSON"),
])
def test_a_window_var_that_is_not_there_or_not_whole_says_why(text: str, reason: str) -> None:
    with pytest.raises(ScanError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        window_var(text, "S")


def test_json_parse_of_a_string_is_read() -> None:
    inner = json.dumps({"list": [{"t": "a'b\"c"}]})
    assert window_var(f"window.S=JSON.parse({json.dumps(inner)})", "S") == json.loads(inner)
    single = "'" + inner.replace("\\", "\\\\").replace("'", "\\'") + "'"
    assert window_var(f"window.S = JSON.parse({single});", "S") == json.loads(inner)


def test_a_flight_payload_with_broken_escapes_is_an_error() -> None:
    with pytest.raises(ScanError, match="flight payload"):
        list(flight_chunks('self.__next_f.push([1,"bad \\x escape"])'))


def test_a_key_that_never_opens_a_value_is_named() -> None:
    with pytest.raises(ScanError, match="never before an object or array"):
        find_key('{"posts": 3, "x": {"posts": "none"}}', "posts")
    with pytest.raises(ScanError, match="no key 'posts'"):
        find_key('{"post": []}', "posts")
