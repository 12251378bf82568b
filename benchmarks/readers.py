"""Page readers' speed: tidings' web_list (html) and json_list parsers against a plain
lxml + cssselect (or json) loop doing the same selection on the same golden pages.

Usage:  .venv/bin/python benchmarks/readers.py [--rounds 7] [--repeat 200] [--cold]

The golden pages of tests/data/web_list (html mode), tests/data/json_list and
examples/sources are each parsed ``repeat`` times per round; the figure is the
median over the rounds of pages per second, for tidings and for the floor, and
the ratio of their times (target: tidings within 1.5x of the floor). The floor
does the selection and reads the same fields, and nothing else: for html, parse the
document, match the item selector, and in each item the link, title, date and
summary selectors, reading href/text; for JSON, ``json.loads``, the items path, the
source's filters (``require_boolean``, ``min_numeric``) and every field path the
config names (url or the filled ``url_template``, title, date, summary, id,
author); for JSON in a page, the script found the shortest way (``raw_decode``
after the marker, flight chunks joined by ``json.loads``). Each line says how many
entries a pass yields on each side (JSON: the same; html: the floor counts every
linked item, tidings what is left after the navigation filter and repeats). What
tidings does on top - navigation filter, URL resolution against <base>, date
parsing, whitespace and length rules, the loud failure checks, ItemData - is what
the ratio measures. Its caches (dates, URLs) are warm after the first pass, as they
are when a source is polled again; ``--cold`` empties them before every parse (a
page never seen before), and that clearing is counted in tidings' time.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import lxml.html
from lxml.cssselect import CSSSelector

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from readers_golden import Case, cases  # noqa: E402
from tidings.model import SourceKind  # noqa: E402
from tidings.readers.jsonlist import JsonListConfig, parse_json_list  # noqa: E402
from tidings.readers.jsonlist import parse as json_parse  # noqa: E402
from tidings.readers.web import WebListConfig, html, links, parse_page  # noqa: E402

_DECODER = json.JSONDecoder()
_PUSH = re.compile(r"self\.__next_f\.push\((\[.*?\])\)</script>", re.S)


@lru_cache(maxsize=64)
def css(selector: str) -> CSSSelector:
    return CSSSelector(selector)


def html_floor(text: str, config: dict[str, Any]) -> int:
    root = lxml.html.document_fromstring(text)
    found = 0
    item = css(config.get("item") or config.get("link") or "a[href]")
    link = css(config.get("link") or "a[href]")
    fields = [css(config[k]) for k in ("title", "date", "summary") if config.get(k)]
    for el in item(root):
        anchors = [el] if el.tag == "a" else link(el)
        if anchors:
            _ = anchors[0].get("href"), anchors[0].text_content()
            for sel in fields:
                hits = sel(el)
                _ = hits[0].text_content() if hits else ""
            found += 1
    return found


def plain_get(data: Any, path: str) -> Any:
    """A field path read the plain way (keys and list indexes joined by dots)."""
    for step in path.split(".") if path else ():
        data = data[int(step)] if isinstance(data, list) else data.get(step)
        if data is None:
            return None
    return data


_FIELDS = ("url", "title", "date", "summary", "id", "author")
_SLOT = re.compile(r"\{(raw:)?([^{}]+)\}")


def json_floor(text: str, config: dict[str, Any]) -> int:
    if config.get("window_var") or config.get("json_key"):
        data = _embedded_floor(text, config)
    else:
        data = json.loads(text)
    entries = plain_get(data, config.get("items_path", ""))
    fields = [config[k] for k in _FIELDS if config.get(k)]
    flags = list(config.get("require_boolean", {}).items())
    least = list(config.get("min_numeric", {}).items())
    slots = _slots(config.get("url_template") or "")
    kept = 0
    for entry in entries:
        if any(plain_get(entry, k) is not v for k, v in flags) or any(
                (plain_get(entry, k) or 0) < v for k, v in least):
            continue  # the source's own filters, as tidings applies them
        _ = [plain_get(entry, path) for path in fields]
        if slots:
            _ = "".join(text if path is None else str(plain_get(entry, path)) if raw
                        else quote(str(plain_get(entry, path)), safe="")
                        for text, raw, path in slots)
        kept += 1
    return kept


@lru_cache(maxsize=64)
def _slots(template: str) -> list[tuple[str, bool, str | None]]:
    """The URL template split once into literal text and (raw?, path) slots."""
    out: list[tuple[str, bool, str | None]] = []
    at = 0
    for m in _SLOT.finditer(template):
        out += [(template[at:m.start()], False, None), ("", bool(m.group(1)), m.group(2))]
        at = m.end()
    return [*out, (template[at:], False, None)] if out else []


def _embedded_floor(text: str, config: dict[str, Any]) -> Any:
    if config.get("window_var"):
        marker = f"window.{config['window_var']}="
        at = text.index(marker) + len(marker)
        return _DECODER.raw_decode(text, at)[0]
    key = f'"{config["json_key"]}":'
    script = re.search(r'<script id="__NEXT_DATA__" type="application/json">(.*?)</script>',
                       text, re.S)
    source = script.group(1) if script else "".join(
        json.loads(m.group(1))[1] for m in _PUSH.finditer(text)
        if json.loads(m.group(1))[0] == 1)
    return _DECODER.raw_decode(source, source.index(key) + len(key))[0]


_CONFIGS: dict[str, Any] = {}


def _config(model: type[Any], case: Case) -> Any:
    """Validated once per source, as a run does."""
    if case.name not in _CONFIGS:
        _CONFIGS[case.name] = model.model_validate(case.config)
    return _CONFIGS[case.name]


def ours_html(text: str, case: Case) -> int:
    return len(parse_page(text, case.url, _config(WebListConfig, case)).items)


def ours_json(text: str, case: Case) -> int:
    return len(parse_json_list(text, case.url, _config(JsonListConfig, case)).items)


def emptied(ours: Callable[[str, Case], int]) -> Callable[[str, Case], int]:
    """``ours`` with tidings' per-value caches emptied before each parse."""
    caches = (links.absolute_cached, links.navigation_cached, html.read_date_cached,
              json_parse.read_scalar_cached)

    def cold(text: str, case: Case) -> int:
        for cache in caches:
            cache.cache_clear()
        return ours(text, case)
    return cold


def timed(fn: Callable[[], int], repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return time.perf_counter() - start


def bench(label: str, picked: list[Case], ours: Callable[[str, Case], int],
          floor: Callable[[str, dict[str, Any]], int], rounds: int, repeat: int) -> None:
    pages = [(c, c.page.read_text(encoding="utf-8")) for c in picked]
    mine: list[float] = []
    base: list[float] = []
    for _ in range(rounds):  # interleaved, so load changes hit both alike
        mine.append(sum(timed(lambda c=c, t=t: ours(t, c), repeat) for c, t in pages))
        base.append(sum(timed(lambda c=c, t=t: floor(t, c.config), repeat) for c, t in pages))
    n = len(pages) * repeat
    got = sum(ours(t, c) for c, t in pages), sum(floor(t, c.config) for c, t in pages)
    ours_s, floor_s = statistics.median(mine), statistics.median(base)
    print(f"{label}: {len(pages)} pages x {repeat}, median of {rounds} rounds; "
          f"entries per pass: tidings {got[0]}, floor {got[1]}")
    print(f"  tidings          {n / ours_s:9.0f} pages/s  ({ours_s * 1000 / n:.3f} ms/page)")
    print(f"  lxml+cssselect / json floor {n / floor_s:9.0f} pages/s  "
          f"({floor_s * 1000 / n:.3f} ms/page)")
    print(f"  ratio (tidings time / floor time): {ours_s / floor_s:.2f}x  (target <= 1.5x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--cold", action="store_true", help="empty tidings' caches per parse")
    args = parser.parse_args()
    every = (cases(ROOT / "tests" / "data" / "web_list", SourceKind("web_list"))
             + cases(ROOT / "tests" / "data" / "json_list", SourceKind("json_list"))
             + cases(ROOT / "examples" / "sources"))
    pages_html = [c for c in every if c.kind == SourceKind("web_list")
            and c.config.get("mode", "html") == "html"]
    plain = [c for c in every if c.kind == SourceKind("json_list")
             and not (c.config.get("window_var") or c.config.get("json_key"))]
    embedded = [c for c in every if c.kind == SourceKind("json_list") and c not in plain]
    on_html, on_json = (emptied(ours_html), emptied(ours_json)) if args.cold else (
        ours_html, ours_json)
    bench("web_list html", pages_html, on_html, html_floor, args.rounds, args.repeat)
    bench("json_list JSON", plain, on_json, json_floor, args.rounds, args.repeat)
    bench("json_list in pages", embedded, on_json, json_floor, args.rounds, args.repeat)


if __name__ == "__main__":
    main()
