"""Property fuzzing of the parsers facing hostile input (issue 16); run by scripts/fuzz.sh.

Not part of the test command: it runs for a time budget, in rounds of
hypothesis examples with fresh seeds, and stops at the first failure with the
shrunk input. A finding becomes a regression test in the suite.

Targets and their properties:

* feeds (XML from fragments, JSON Feed from random JSON, raw bytes): a
  ParsedFeed or a ParseError, nothing else;
* OPML: a list or a ParseError;
* charset decoding: always text;
* URL normalization: a string, and normalizing again changes nothing;
* the search box: through a real SQLite archive, results or a ConfigError
  (never a StorageError: the database's words must not reach a user);
* the sanitizer: no script, no event handler, no ``javascript:``, and
  sanitizing again changes nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import hypothesis
import lxml.html
from hypothesis import given
from hypothesis import strategies as st

from test_web_support import Spec, add_items, add_source, open_archive
from tidings.app import Tidings
from tidings.errors import ConfigError, ParseError, StorageError
from tidings.extract import sanitize_html
from tidings.identity.urls import normalize_url
from tidings.net import decode_text
from tidings.opml import parse_opml
from tidings.readers.rss.parse import parse_feed
from tidings.settings import load_settings

ROUND = 200  # examples per round; a round is the unit of the time budget

_XML_BITS = ["<?xml version='1.0' encoding='utf-8'?>", "<?xml version='1.0' encoding='latin-1'?>",
             "<rss version='2.0'>", "</rss>", "<channel>", "</channel>", "<item>", "</item>",
             "<title>", "</title>", "<link>", "</link>", "<description>", "</description>",
             "<feed xmlns='http://www.w3.org/2005/Atom'>", "<entry>", "</entry>",
             "<content type='html'>", "</content>", "&amp;", "&lt;script&gt;", "&#0;", "&#xD800;",
             "&undefined;", "<![CDATA[", "]]>", "<!DOCTYPE x [<!ENTITY e 'eeee'>]>", "&e;",
             "\x00", "\x0c", "\ufeff", "é", "中文", "<", ">", "'", '"', "<pubDate>", "</pubDate>",
             "Mon, 30 Feb 2026 25:61:00 +9999", "<guid>", "</guid>", "http://x.example/a"]
_HTML_BITS = ["<script>", "</script>", "<img src=x onerror=alert(1)>", "<a href='",
              "javascript:alert(1)", "'>", "</a>", "<svg>", "<math>", "<style>", "</style>",
              "<iframe>", "<p>", "</p>", "<!--", "-->", "<noscript>", "<template>", "&#106;",
              "jav&#x09;ascript:", "<base href='/x'>", "<form action=", "<object data=",
              "<img src='data:image/svg+xml,<svg onload=alert(1)>'>", "style='x:expression(1)'",
              " onclick=", "<details open ontoggle=1>", "text", "<"]
_SEARCH_BITS = ['"', "-", ":", "intitle:", "author:", "source:", "date:", "2024-13-45", "*",
                "(", ")", "AND", "OR", "NOT", "NEAR", "^", "\x00", "'", "中文", "a", "..", " "]


def _joined(bits: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(bits) | st.text(max_size=8), max_size=40).map("".join)


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=30)


def _feeds() -> Callable[[], None]:
    @given(st.one_of(_joined(_XML_BITS).map(lambda s: s.encode("utf-8", "surrogatepass")),
                     st.binary(max_size=500),
                     _json.map(lambda doc: json.dumps({"version": "https://jsonfeed.org/"
                                                       "version/1.1", "items": doc}).encode())))
    def run(data: bytes) -> None:
        with contextlib.suppress(ParseError):
            parse_feed(data, url="http://x.example/feed")
    return run


def _opml() -> Callable[[], None]:
    @given(_joined(["<opml>", "</opml>", "<body>", "</body>", "<outline xmlUrl='http://a/'>",
                    "<outline text='f'>", "</outline>", "&amp;", "\x00", "<"]))
    def run(text: str) -> None:
        with contextlib.suppress(ParseError):
            parse_opml(text.encode("utf-8", "surrogatepass"))
    return run


def _charset() -> Callable[[], None]:
    @given(st.binary(max_size=400), st.sampled_from(["", "text/xml; charset=utf-8",
                                                     "text/html; charset=x-nonsense",
                                                     "text/html; charset=gb2312"]))
    def run(data: bytes, content_type: str) -> None:
        assert isinstance(decode_text(data, content_type), str)
    return run


def _urls() -> Callable[[], None]:
    @given(st.one_of(st.text(max_size=60), st.builds(
        lambda host, path, query: f"http://{host}/{path}?{query}",
        st.text(max_size=20), st.text(max_size=20), st.text(max_size=20))))
    def run(url: str) -> None:
        once = normalize_url(url)
        assert normalize_url(once) == once, (url, once)
    return run


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SCHEME = re.compile(r"^\s*(javascript|vbscript|data):", re.IGNORECASE)


def _unsafe(clean: str) -> list[str]:
    """What a browser could run in sanitized HTML: script-bearing elements, event
    handlers, script URLs (text that merely reads "javascript:" is harmless)."""
    if not clean.strip():
        return []
    # lxml takes no control characters; a browser skips them, so they change nothing
    tree = lxml.html.fragment_fromstring(_CONTROL.sub("", clean), create_parent="div")
    found = [el.tag for el in tree.iter() if isinstance(el.tag, str)
             and el.tag.lower() in {"script", "iframe", "object", "embed", "base", "svg", "math"}]
    for el in tree.iter():
        for name, value in el.attrib.items():
            if name.lower().startswith("on") or (
                    name.lower() in {"href", "src", "action", "formaction", "data"}
                    and _SCHEME.match(value)):
                found.append(f"{el.tag}@{name}={value}")
    return found


def _sanitizer() -> Callable[[], None]:
    @given(_joined(_HTML_BITS))
    def run(html: str) -> None:
        clean = sanitize_html(html)
        assert _unsafe(clean) == [], (html, clean)
    return run


def _search(tid: Tidings) -> Callable[[], None]:
    @given(_joined(_SEARCH_BITS))
    def run(text: str) -> None:
        try:
            tid.search.find(text)
        except ConfigError:
            pass
        except StorageError as exc:  # the database's own error: a finding
            raise AssertionError(f"search {text!r}: {exc}") from exc
    return run


def _archive(folder: Path) -> Tidings:
    tid = open_archive(load_settings(folder / "data", env={}))
    add_source(tid, "s", "Source")
    add_items(tid, [Spec(f"story {n} 中文 alpha", source_id="s", body=f"<p>body {n} beta</p>",
                         age=timedelta(minutes=n)) for n in range(30)])
    return tid


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="budget per target")
    parser.add_argument("targets", nargs="*", help="feeds opml charset urls sanitizer search")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tid = _archive(Path(tmp))
        targets: dict[str, Callable[[], Callable[[], None]]] = {
            "feeds": _feeds, "opml": _opml, "charset": _charset, "urls": _urls,
            "sanitizer": _sanitizer, "search": lambda: _search(tid)}
        chosen = args.targets or list(targets)
        failed = 0
        for name in chosen:
            failed += _fuzz(name, targets[name], args.seconds)
        tid.close()
    return 1 if failed else 0


def _fuzz(name: str, make: Callable[[], Callable[[], None]], seconds: float) -> int:
    started = time.monotonic()
    examples = 0
    while time.monotonic() - started < seconds:
        run: Any = make()
        try:
            hypothesis.settings(max_examples=ROUND, deadline=None, database=None,
                                suppress_health_check=list(hypothesis.HealthCheck))(run)()
        except Exception as exc:
            where = traceback.format_exc(limit=-4)
            print(f"{name}: FAILED after {examples} examples: {exc!r}\n{where}", file=sys.stderr)
            return 1
        examples += ROUND
    print(f"{name}: {examples} examples in {time.monotonic() - started:.0f} s, no failure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
