"""A JavaScript object or array literal as JSON, for lists that live in script bundles.

Minified bundles write data as literals that are not JSON: unquoted keys
(``{title:"A"}``), single-quoted strings, ``!0``/``!1`` for true/false,
``void 0`` for undefined, trailing commas. This rewrites those few shapes,
token by token (strings are copied whole, so nothing inside them is touched),
and leaves the parsing to the json module; anything else - a variable, a
function call - makes the literal "not data", which the caller reports.

chompjs parses such literals too, 10-20x faster (it is C), but it was measured
against this on golden literals and lost where it matters here
(``benchmarks/js_literal.py``, docs/readers.md): it reads ``!0``, ``void 0``,
``true`` and ``undefined`` as strings, and turns a call or a variable
(``{a:foo()}``) into the string ``"foo()"`` instead of refusing it, so a
rebuilt bundle would store garbage instead of failing loudly (R-WEB-4).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tidings.readers.jsonlist.scan import ScanError

#: one token of a literal; the first alternative that matches at a position wins. A run
#: of what JSON reads as it is (double-quoted strings, brackets, colons, commas that are
#: not trailing, JSON numbers, spaces) is one token, copied whole
_TOKEN = re.compile(r"""
    (?P<json>(?:"(?:[^"\\]|\\.)*"|[{}\[\]:\s]|,(?!\s*[}\]])
              |-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w$.]))+)
  | (?P<trailing>,\s*(?=[}\]]))
  | (?P<sq>'(?:[^'\\]|\\.)*')
  | (?P<bang>![01])
  | (?P<void>void\s+0(?![\w$]))
  | (?P<num>-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<key>[A-Za-z_$][\w$]*)(?=\s*:)
  | (?P<word>[A-Za-z_$][\w$]*)
  | (?P<tpl>`)
""", re.VERBOSE | re.DOTALL)
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_SQ_ESCAPES = re.compile(r'\\(.)|"', re.DOTALL)
_WORDS = {"true": "true", "false": "false", "null": "null", "undefined": "null"}


def _sq_escape(m: re.Match[str]) -> str:
    escaped = m.group(1)
    if escaped is None:
        return '\\"'  # a double quote inside single quotes
    return "'" if escaped == "'" else "\\" + escaped


def _single_quoted(literal: str) -> str:
    """A single-quoted JS string as a JSON one (its escapes kept, quotes swapped)."""
    body = literal[1:-1]
    if "\\" in body or '"' in body:
        body = _SQ_ESCAPES.sub(_sq_escape, body)
    return f'"{body}"'


def _number(literal: str) -> str:
    """A JS number as JSON writes it: ``.5``, ``5.`` and ``1.e3`` are JS, not JSON."""
    return literal if _JSON_NUMBER.fullmatch(literal) else repr(float(literal))


def _word(word: str) -> str:
    if word not in _WORDS:
        raise ScanError(f"{word!r} in the literal is not data")
    return _WORDS[word]


def to_json(text: str) -> str:
    """The literal ``text`` rewritten as JSON text (ScanError when it is not data)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        m = _TOKEN.match(text, i)
        if m is None:
            raise ScanError(f"{text[i]!r} at offset {i} of the literal is not data")
        kind, token = m.lastgroup, m.group()
        i = m.end()
        if kind == "json":
            out.append(token)
        elif kind == "sq":
            out.append(_single_quoted(token))
        elif kind == "bang":
            out.append("true" if token.endswith("0") else "false")  # !0 is true
        elif kind == "void":
            out.append("null")
        elif kind == "num":
            out.append(_number(token))
        elif kind == "key":
            out.append(json.dumps(token))
        elif kind == "word":
            out.append(_word(token))
        elif kind == "tpl":
            raise ScanError("a template string in the literal")
    return "".join(out)


def parse_literal(text: str) -> Any:
    """The data of a JS literal; ScanError when it is not data or nests too deep to read
    (thousands of levels: the json module's recursion limit, reported, not raised)."""
    try:
        return json.loads(to_json(text))
    except ValueError as exc:
        raise ScanError(f"the literal is not data ({exc})") from None
    except RecursionError:
        raise ScanError("the literal nests too deep to read") from None
