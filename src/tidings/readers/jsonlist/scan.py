"""Finding JSON inside JavaScript: a bracket scanner and the Next.js flight decoder (R-JSON-2).

No library reads "the object literal that starts here" out of arbitrary script
text without executing it, so this is our own: a scanner that balances
brackets and knows that a bracket inside a string (double, single or back
quoted, with backslash escapes) does not count. What it cuts out is handed to
the json module, which does the real parsing.

Next.js App Router pages carry their data as "flight" chunks,
``self.__next_f.push([1,"…"])``: each chunk's second element is a JSON string
whose decoded text, concatenated over all chunks, holds rows like
``5:{"posts":[…]}``. The key is searched in that decoded text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

_OPEN = {"{": "}", "[": "]"}
_CLOSE = frozenset("}]")
_QUOTES = frozenset("\"'`")
_STRUCTURE = re.compile(r"[\[\]{}\"'`\\]")
_DECODER = json.JSONDecoder()
_FLIGHT = re.compile(r"self\.__next_f\.push\(\s*(?=\[)")


class ScanError(ValueError):
    """The text does not hold what was looked for; the message says what went wrong."""


def value_end(text: str, start: int) -> int:
    """The index just past the bracketed value opening at ``text[start]`` (``{`` or ``[``)."""
    if start >= len(text) or text[start] not in _OPEN:
        raise ScanError(f"no object or array at offset {start}")
    stack: list[str] = []
    quote = ""
    find = _STRUCTURE.search
    i = start
    while (match := find(text, i)) is not None:
        i = match.start()
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in _QUOTES:
            quote = ch
        elif ch in _OPEN:
            stack.append(_OPEN[ch])
        elif ch in _CLOSE:
            if not stack or stack.pop() != ch:
                raise ScanError(f"mismatched {ch!r} at offset {i}")
            if not stack:
                return i + 1
        i += 1
    what = "a string" if quote else f"{len(stack)} brackets"
    raise ScanError(f"the value opened at offset {start} never closes ({what} still open)")


def json_at(text: str, start: int) -> Any:
    """The JSON value whose brackets open at ``text[start]``.

    The json module's own decoder reads it when it is JSON (the usual case, at C
    speed); the scanner runs only for what it refuses, to say where it breaks.
    """
    if start < len(text) and text[start] in _OPEN:
        try:
            return _DECODER.raw_decode(text, start)[0]
        except ValueError:
            pass
    end = value_end(text, start)
    try:
        return json.loads(text[start:end])
    except ValueError as exc:
        raise ScanError(f"the value at offset {start} is not JSON ({exc})") from None


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


@lru_cache(maxsize=64)
def _assignment(name: str) -> re.Pattern[str]:
    """``window.NAME =`` or ``window["NAME"] =`` (not ``==``)."""
    quoted = re.escape(name)
    return re.compile(rf"window(?:\.{quoted}|\[\s*[\"']{quoted}[\"']\s*\])\s*=(?!=)\s*")


def window_var(text: str, name: str) -> Any:
    """The value assigned to ``window.NAME`` in ``text`` (an object literal that is
    JSON, or ``JSON.parse("…")`` of one)."""
    match = _assignment(name).search(text)
    if match is None:
        raise ScanError(f"no assignment to window.{name}")
    i = _skip_ws(text, match.end())
    if text.startswith("JSON.parse(", i):
        return _json_parse_call(text, _skip_ws(text, i + len("JSON.parse(")), name)
    return json_at(text, i)


def _json_parse_call(text: str, i: int, name: str) -> Any:
    if i >= len(text) or text[i] not in "\"'":
        raise ScanError(f"window.{name} = JSON.parse(…) of something other than a string")
    end = string_end(text, i)
    literal = text[i:end]
    if literal[0] == "'":
        literal = _double_quoted(literal)
    try:
        return json.loads(json.loads(literal))
    except ValueError as exc:
        raise ScanError(f"window.{name} = JSON.parse(…): not JSON ({exc})") from None


def _double_quoted(literal: str) -> str:
    """A JS single-quoted string literal as a JSON (double-quoted) one."""
    out = ['"']
    i, end = 1, len(literal) - 1
    while i < end:
        ch = literal[i]
        if ch == "\\":
            nxt = literal[i + 1]
            out.append("'" if nxt == "'" else ch + nxt)
            i += 2
            continue
        out.append('\\"' if ch == '"' else ch)
        i += 1
    out.append('"')
    return "".join(out)


def string_end(text: str, start: int) -> int:
    """The index just past the string literal opening at ``text[start]``."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == quote:
            return i + 1
        i += 1
    raise ScanError(f"the string opened at offset {start} never closes")


def flight_chunks(script: str) -> Iterator[str]:
    """The decoded strings of the ``self.__next_f.push([1,"…"])`` calls in ``script``."""
    for match in _FLIGHT.finditer(script):
        try:
            args = json_at(script, match.end())
        except ScanError as exc:
            raise ScanError(f"flight payload: {exc}") from None
        if not isinstance(args, list) or not args:
            raise ScanError("flight payload: push() of something other than [type, data]")
        if args[0] == 1 and len(args) > 1 and isinstance(args[1], str):
            yield args[1]


def find_key(text: str, key: str) -> Any:
    """The first object or array that ``"key":`` introduces in ``text``.

    Raises ScanError when the key is not there or no value after it is JSON.
    """
    needle = json.dumps(key) + ":"
    start = 0
    last_error = ""
    found = 0
    while True:
        at = text.find(needle, start)
        if at < 0:
            break
        found += 1
        i = _skip_ws(text, at + len(needle))
        start = at + len(needle)
        if i < len(text) and text[i] in _OPEN:
            try:
                return json_at(text, i)
            except ScanError as exc:
                last_error = str(exc)
    if not found:
        raise ScanError(f"no key {key!r}")
    raise ScanError(f"key {key!r} found {found} times, never before an object or array"
                    + (f" that is JSON ({last_error})" if last_error else ""))
