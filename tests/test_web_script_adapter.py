"""``script`` adapters (R-WEB-4): the built-in ``bundle_list`` against a local single-page
site, the JS-literal reader, and the loud failure when the bundle changed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st

from netservers import serve
from tidings.app import ItemQuery, Tidings
from tidings.errors import ConfigError
from tidings.model import RunOutcome, SourceKind
from tidings.pipeline.config import parse_config
from tidings.readers.jsonlist.jsliteral import parse_literal
from tidings.readers.jsonlist.scan import ScanError
from tidings.settings import Settings

INDEX = """<!doctype html><html lang="zh"><head><meta charset="utf-8"><title>MiMo</title>
<script type="module" crossorigin src="/assets/index-4f2a1c.js"></script>
<link rel="modulepreload" crossorigin href="/assets/vendor-react-77aa01.js">
<link rel="stylesheet" href="/assets/index-0b1d.css"></head>
<body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>
</body></html>"""
ENTRY = """import{r as e,j as t}from"./vendor-react-77aa01.js";const n=[{path:"/",
component:()=>import("./Home-9c81d2.js")},{path:"/about",component:()=>import("./About-1d2e.js")}];
function o(){return t.jsx("nav",{children:[t.jsx("a",{href:"/about",children:"About"})]})}
export{n as routes,o as Nav};"""
HOME = """import{j as e}from"./vendor-react-77aa01.js";const s=[{sectionTitle:"Models",items:[
{title:"MiMo-7B",link:"/models/7b"}]},{sectionTitle:"Blog",blogs:[
{title:"MiMo-VL technical report",link:"/blog/mimo-vl",
desc:'Vision-language, it\\'s "open" [weights] {too}',date:"2026-09-20"},
{title:"Reasoning from pretraining",link:"https://mimo.example/blog/reasoning",desc:"",
date:"2026-08-02",hidden:!1,},],},];export default function(){return e.jsx("div",{children:s})}"""


@pytest.fixture
async def spa(settings: Settings) -> AsyncIterator[tuple[Tidings, dict[str, str]]]:
    files = {"/": INDEX, "/assets/index-4f2a1c.js": ENTRY, "/assets/Home-9c81d2.js": HOME,
             "/assets/vendor-react-77aa01.js": "export const r=1,j={jsx(){}};",
             "/assets/About-1d2e.js": "export default 1;"}

    async def handle(request: web.Request) -> web.Response:
        body = files.get(request.path)
        if body is None:
            raise web.HTTPNotFound()
        kind = "text/html" if request.path == "/" else "text/javascript"
        return web.Response(text=body, content_type=kind)

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    async with serve(app) as base:
        t = Tidings.open(replace(settings, http_max_bytes=2_000_000), create=True)
        files["base"] = base
        yield t, files
        await t.aclose()


CONFIG = {"mode": "script", "adapter": "bundle_list",
          "adapter_options": {"marker": 'sectionTitle:"Blog"', "key": "blogs", "date": "date"}}


async def test_the_list_is_read_from_the_lazily_loaded_chunk(
    spa: tuple[Tidings, dict[str, str]],
) -> None:
    t, files = spa
    await t.sources.create(files["base"] + "/", kind=SourceKind("web_list"), source_id="mimo",
                           config=CONFIG)
    report = await t.collection.round(extract=False)
    assert report.results["mimo"].outcome is RunOutcome.OK, report.results["mimo"].error
    items = sorted(t.items.query(ItemQuery(limit=10)), key=lambda i: i.title)
    assert [(i.title, i.url) for i in items] == [
        ("MiMo-VL technical report", files["base"] + "/blog/mimo-vl"),
        ("Reasoning from pretraining", "https://mimo.example/blog/reasoning")]
    assert items[0].summary == 'Vision-language, it\'s "open" [weights] {too}'
    assert items[0].published_at is not None and items[0].published_at.day == 20


async def test_a_bundle_without_the_marker_fails_and_never_reads_the_menu(
    spa: tuple[Tidings, dict[str, str]],
) -> None:
    t, files = spa
    files["/assets/Home-9c81d2.js"] = HOME.replace('sectionTitle:"Blog"', 'sectionTitle:"News"')
    await t.sources.create(files["base"] + "/", kind=SourceKind("web_list"), source_id="mimo",
                           config=CONFIG)
    report = await t.collection.round(extract=False)
    assert report.results["mimo"].outcome is RunOutcome.FAILED
    assert "marker 'sectionTitle:\"Blog\"' in none of the 4 scripts read" in (
        t.sources.get("mimo").last_error or "")
    assert t.items.query(ItemQuery(limit=10)) == []


@pytest.mark.parametrize(("config", "reason"), [
    ({"mode": "script", "adapter": "nope"}, "no script adapter 'nope' (known: bundle_list"),
    ({"mode": "script", "adapter": "bundle_list", "adapter_options": {"marker": "xyz"}},
     "adapter_options.key: Field required"),
    ({"mode": "html", "adapter_options": {"key": "x"}}, "adapter_options: not read in mode 'html'"),
])
def test_adapter_configs_are_checked_on_save(config: dict[str, object], reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(SourceKind("web_list"), config)
    assert reason in caught.value.message


GOLDEN_LITERALS = json.loads(
    (Path(__file__).parent / "data" / "js_literals.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", GOLDEN_LITERALS["literals"], ids=lambda c: c["literal"][:24])
def test_js_literals_become_data(case: dict[str, Any]) -> None:
    assert parse_literal(case["literal"]) == case["data"]


@pytest.mark.parametrize("bad", GOLDEN_LITERALS["not_data"])
def test_what_is_not_data_is_refused(bad: str) -> None:
    with pytest.raises(ScanError):
        parse_literal(bad)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(), lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)


@given(JSON_VALUES, st.booleans())
def test_json_is_read_as_itself(value: Any, spaced: bool) -> None:
    """JSON is a JS literal: copied through whole, whatever its strings hold."""
    text = json.dumps({"v": value}, indent=1 if spaced else None, ensure_ascii=spaced)
    assert parse_literal(text) == {"v": value}


def test_a_literal_nested_too_deep_is_refused_not_raised() -> None:
    with pytest.raises(ScanError, match="nests too deep"):
        parse_literal("[" * 5000 + "]" * 5000)
