"""json_list: paths, templates, units, filters, and the failures R-JSON-3 asks for."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tidings.errors import ConfigError, ParseError
from tidings.model import SourceKind
from tidings.pipeline.config import parse_config
from tidings.readers.jsonlist import JsonListConfig, parse_json_list
from tidings.readers.jsonlist.parse import read_date
from tidings.readers.jsonlist.paths import fill_template, get_path

URL = "https://api.example.com/posts"


def cfg(**keys: Any) -> JsonListConfig:
    return JsonListConfig.model_validate(keys)


def test_paths_reach_into_objects_and_arrays() -> None:
    data = {"a": {"b": [{"c": 1}, {"c": 2}]}}
    assert get_path(data, "a.b.1.c") == 2
    assert get_path(data, "a.b[0].c") == 1
    assert get_path(data, "a.x.c") is None
    assert get_path(data, "a.b.5") is None


def test_templates_encode_by_default_and_raw_keeps_verbatim() -> None:
    entry = {"id": "a/b c?", "path": "/x/y?z=1"}
    assert fill_template("https://h/i?id={id}", entry) == "https://h/i?id=a%2Fb%20c%3F"
    assert fill_template("https://h{raw:path}", entry) == "https://h/x/y?z=1"
    assert fill_template("https://h/{missing}", entry) is None


@pytest.mark.parametrize(("value", "unit", "expected"), [
    (1727186400, "epoch_s", datetime(2024, 9, 24, 14, 0, tzinfo=UTC)),
    ("1727186400000", "epoch_ms", datetime(2024, 9, 24, 14, 0, tzinfo=UTC)),
    (1727186400000, "epoch_s", None),  # milliseconds read as seconds: year 56000
    (20260926, "yyyymmdd", datetime(2026, 9, 26, tzinfo=UTC)),
    ("2026-09-26", "yyyymmdd", datetime(2026, 9, 26, tzinfo=UTC)),
    (20261399, "yyyymmdd", None),
    ("2026-09-26T10:00:00+02:00", "iso", datetime(2026, 9, 26, 8, 0, tzinfo=UTC)),
    (1727186400, "iso", None),
    (True, "epoch_s", None),
])
def test_date_units(value: Any, unit: str, expected: datetime | None) -> None:
    assert read_date(value, unit) == expected


def doc(entries: list[Any]) -> str:
    return json.dumps({"data": {"items": entries}})


@pytest.mark.parametrize(("text", "keys", "reason"), [
    ("<html>nope</html>", {"url": "u"}, "not JSON"),
    (doc([]), {"items_path": "data.posts", "url": "u"},
     "items_path 'data.posts': expected an array, found nothing"),
    (json.dumps({"data": {"items": {}}}), {"items_path": "data.items", "url": "u"},
     "expected an array, found dict"),
    (doc([{"link": "https://x/1", "title": "t"}] * 3), {"items_path": "data.items", "url": "url"},
     "3 entries under items_path 'data.items', none mapped (url 'url' missing"),
    (doc([{"url": "https://x/1", "name": "t"}]), {"items_path": "data.items", "url": "url"},
     "none mapped (title 'title' missing in 1)"),
    (doc([{"url": "https://x/1", "title": "t", "d": "26/09/2026 x"}]),
     {"items_path": "data.items", "url": "url", "date": "d"},
     "date 'd': no value read as iso (first: '26/09/2026 x')"),
])
def test_what_maps_nothing_fails(text: str, keys: dict[str, Any], reason: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_json_list(text, URL, cfg(**keys))
    assert reason in caught.value.message and "\n" not in caught.value.message


def test_filtered_entries_are_not_a_failure() -> None:
    entries = [{"url": "https://x/1", "title": "a", "ok": False, "n": 50},
               {"url": "https://x/2", "title": "b", "ok": True, "n": 5}]
    parsed = parse_json_list(doc(entries), URL, cfg(items_path="data.items", url="url",
                                                     require_boolean={"ok": True},
                                                     min_numeric={"n": 10}))
    assert parsed.items == [] and parsed.filtered == 2


def test_embedded_lists_that_are_missing_are_named() -> None:
    page = "<html><script>window.__A__ = {\"x\": [1, 2</script></html>"
    with pytest.raises(ParseError, match=r"window_var '__A__': the value .* never closes"):
        parse_json_list(page, URL, cfg(window_var="__A__", url="u"))
    with pytest.raises(ParseError, match="json_key 'posts': no <script> of the 1 holds it"):
        parse_json_list(page, URL, cfg(json_key="posts", url="u"))
    flight = '<html><script>self.__next_f.push([1,"5:{\\"posts\\":[bad \\q"])</script></html>'
    with pytest.raises(ParseError, match="flight payload"):
        parse_json_list(flight, URL, cfg(json_key="posts", url="u"))


@pytest.mark.parametrize(("config", "reason"), [
    ({"url": "u", "url_template": "https://x/{id}"}, "give exactly one of 'url'"),
    ({"url_template": "https://x/"}, "names no field"),
    ({"url_template": "ftp://x/{id}"}, "must start with http"),
    ({"url": "a..b"}, "bad field path 'a..b'"),
    ({"url": "u", "itemspath": "x"}, "did you mean 'items_path'?"),
    ({"url": "u", "window_var": "a-b"}, "config key 'window_var'"),
    ({"url": "u", "date_unit": "epoch"}, "config key 'date_unit'"),
    ({"url": "u", "require_boolean": {"draft": "no"}}, "config key 'require_boolean.draft'"),
])
def test_a_bad_json_list_config_is_refused(config: dict[str, Any], reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(SourceKind("json_list"), config)
    assert reason in caught.value.message


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=400), cut=st.integers(min_value=0, max_value=4000))
def test_arbitrary_and_truncated_input_only_ever_raises_parse_error(text: str, cut: int) -> None:
    from pathlib import Path

    from tidings.readers.web import WebListConfig, parse_page

    page = (Path(__file__).parent / "data" / "json_list" / "nextjs_flight.html").read_text()
    configs = [cfg(json_key="articles", url_template="https://x{raw:url}", title="headline"),
               cfg(window_var="S", url="u"), cfg(items_path="a.b", url="u")]
    for doc in (text, page[:cut], page[:cut] + text):
        for config in configs:
            with contextlib.suppress(ParseError):
                parse_json_list(doc, URL, config)
        for web_config in (WebListConfig(), WebListConfig(item="li", date="time"),
                           WebListConfig(mode="changelog"), WebListConfig(mode="markdown")):
            with contextlib.suppress(ParseError):
                parse_page(doc, URL, web_config)
