"""JSON that a page carries in its scripts (R-JSON-2).

``window_var``: the first script assigning ``window.NAME = …``. ``json_key``:
every ``<script>`` is asked, in order of how directly it holds data - JSON
scripts (``__NEXT_DATA__``, ``application/json``, ``application/ld+json``)
searched as parsed JSON for the shallowest value under the key, then the
Next.js flight payload (all ``self.__next_f.push`` chunks decoded and joined),
then the key in any other script's text. The first that holds the key wins.
"""

from __future__ import annotations

import html
import json
import re
from collections import deque
from collections.abc import Iterator
from typing import Any

from tidings.errors import ParseError
from tidings.readers.jsonlist.scan import ScanError, find_key, flight_chunks, window_var

_JSON_TYPES = ("application/json", "application/ld+json")
_SCRIPT_OPEN = re.compile(r"<script\b([^>]*)>", re.IGNORECASE)
_SCRIPT_CLOSE = re.compile(r"</script\s*>", re.IGNORECASE)
_ATTR = re.compile(r"""([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_MISSING = object()


Script = tuple[str, str, str]  # id, type, text


def scripts_of(text: str, url: str) -> Iterator[Script]:
    """(id, type, text) of each ``<script>`` of the page, in order and only as far as
    they are asked for (``url`` is for messages).

    A script's text runs to the first ``</script`` whatever it contains - the HTML
    tokenizer's own rule - so a search cuts scripts out exactly as a parser would,
    without building the page's tree (the cost of a page that is mostly data).
    """
    for head, body in _script_spans(text):
        if not body or body.isspace():
            continue  # <script src=…>: nothing in the page
        attrs = {k.lower(): html.unescape(a or b or c) for k, a, b, c in
                 _ATTR.findall(head)} if head else {}
        # script data is never entity-decoded: its text is taken as written
        yield attrs.get("id", ""), attrs.get("type", "").lower(), body


def _script_spans(text: str) -> Iterator[tuple[str, str]]:
    """(attributes, text) of each ``<script>…</script>``: the opening tag found, then
    its end searched from there (two plain searches; one lazy ``.*?`` pattern over
    the page tries the end at every character)."""
    at = 0
    while (opened := _SCRIPT_OPEN.search(text, at)) is not None:
        closed = _SCRIPT_CLOSE.search(text, opened.end())
        if closed is None:
            return  # an unclosed script holds nothing whole
        yield opened.group(1), text[opened.end():closed.start()]
        at = closed.end()


def embedded_json(text: str, url: str, *, window_var: str | None,
                  json_key: str | None) -> Any:
    scripts = scripts_of(text, url)
    if window_var:
        return _window(scripts, url, window_var)
    assert json_key is not None
    return _keyed(scripts, url, json_key)


def _window(scripts: Iterator[Script], url: str, name: str) -> Any:
    last = f"no script assigns window.{name}"
    for _id, _type, body in scripts:
        if name not in body:
            continue
        try:
            return window_var(body, name)
        except ScanError as exc:
            last = str(exc)
    raise ParseError(f"{url}: window_var {name!r}: {last}", url)


def _keyed(lazy: Iterator[Script], url: str, key: str) -> Any:
    errors: list[str] = []
    scripts: list[Script] = []  # the page is cut no further than the script that holds it
    for sid, stype, body in lazy:
        scripts.append((sid, stype, body))
        if sid == "__NEXT_DATA__" or stype in _JSON_TYPES:
            found = _from_json_script(body, key, errors, sid or stype)
            if found is not _MISSING:
                return found
    flight = [body for _id, _type, body in scripts if "self.__next_f" in body]
    if flight:
        try:
            joined = "".join(chunk for body in flight for chunk in flight_chunks(body))
            return find_key(joined, key)
        except ScanError as exc:
            errors.append(f"flight payload: {exc}")
    for _id, stype, body in scripts:
        if stype in _JSON_TYPES or "self.__next_f" in body or f'"{key}"' not in body:
            continue
        try:
            return find_key(body, key)
        except ScanError as exc:
            errors.append(str(exc))
    detail = f" ({'; '.join(errors[:2])})" if errors else ""
    raise ParseError(f"{url}: json_key {key!r}: no <script> of the {len(scripts)} holds it"
                     f"{detail}", url)


def _from_json_script(body: str, key: str, errors: list[str], name: str) -> Any:
    try:
        data = json.loads(body)
    except ValueError as exc:
        errors.append(f"script {name}: not JSON ({exc})")
        return _MISSING
    return shallowest(data, key)


def shallowest(data: Any, key: str) -> Any:
    """The value under ``key`` nearest the root (breadth first), or ``_MISSING``."""
    queue: deque[Any] = deque([data])
    while queue:
        node = queue.popleft()
        if isinstance(node, dict):
            if key in node:
                return node[key]
            queue.extend(node.values())
        elif isinstance(node, list):
            queue.extend(node)
    return _MISSING
