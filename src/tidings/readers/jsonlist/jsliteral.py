"""A JavaScript object or array literal as JSON, for lists that live in script bundles.

Minified bundles write data as literals that are not JSON: unquoted keys
(``{title:"A"}``), single-quoted strings, ``!0``/``!1`` for true/false,
``void 0`` for undefined, trailing commas. This rewrites those few shapes,
token by token (strings are copied whole, so nothing inside them is touched),
and leaves the parsing to the json module; anything else - a variable, a
function call - makes the literal "not data", which the caller reports.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tidings.readers.jsonlist.scan import ScanError, string_end

_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_WORDS = {"true": "true", "false": "false", "null": "null", "undefined": "null"}


def _string(text: str, i: int) -> tuple[str, int]:
    end = string_end(text, i)
    literal = text[i:end]
    if literal[0] == '"':
        return literal, end
    body = literal[1:-1]
    out: list[str] = []
    j = 0
    while j < len(body):
        ch = body[j]
        if ch == "\\":
            nxt = body[j + 1] if j + 1 < len(body) else ""
            out.append("'" if nxt == "'" else "\\" + nxt)
            j += 2
            continue
        out.append('\\"' if ch == '"' else ch)
        j += 1
    return '"' + "".join(out) + '"', end


def to_json(text: str) -> str:
    """The literal ``text`` rewritten as JSON text (ScanError when it is not data)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'`":
            if ch == "`":
                raise ScanError("a template string in the literal")
            piece, i = _string(text, i)
            out.append(piece)
        elif ch in "{}[]:,":
            if ch in "}]" and out and out[-1] == ",":
                out.pop()  # a trailing comma
            out.append(ch)
            i += 1
        elif ch.isspace():
            i += 1
        elif text.startswith(("!0", "!1"), i):
            out.append("true" if text[i + 1] == "0" else "false")
            i += 2
        elif text.startswith("void 0", i):
            out.append("null")
            i += 6
        elif (m := _NUMBER.match(text, i)) is not None:
            out.append(m.group(0))
            i = m.end()
        elif (m := _IDENT.match(text, i)) is not None:
            word = m.group(0)
            after = text[m.end():].lstrip()[:1]
            if after == ":":
                out.append(json.dumps(word))
            elif word in _WORDS:
                out.append(_WORDS[word])
            else:
                raise ScanError(f"{word!r} in the literal is not data")
            i = m.end()
        else:
            raise ScanError(f"{ch!r} at offset {i} of the literal is not data")
    return "".join(out)


def parse_literal(text: str) -> Any:
    try:
        return json.loads(to_json(text))
    except ValueError as exc:
        raise ScanError(f"the literal is not data ({exc})") from None
