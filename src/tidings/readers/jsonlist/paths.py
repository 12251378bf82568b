"""Field paths into JSON (``data.children``, ``hits.0.title``, ``items[2].url``) and URL
templates (``https://news.ycombinator.com/item?id={objectID}``, ``{raw:path}``).

A path is dot-separated keys; a key made of digits (or ``[n]``) indexes an array.
Templates name paths in braces: ``{path}`` is inserted URL-encoded (a value
with ``/`` or ``?`` cannot break the URL), ``{raw:path}`` verbatim (a value that
is already a path or a URL).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any
from urllib.parse import quote

_MISSING = object()
_SEGMENT = re.compile(r"[^.\[\]]+|\[\d+\]")
_WHOLE = re.compile(r"(?:[^.\[\]]+|\[\d+\])(?:\.[^.\[\]]+|\[\d+\])*")
_PLACEHOLDER = re.compile(r"\{(raw:)?([^{}]+)\}")
# What ``quote`` leaves as it is (an id, a slug): checked instead of encoding it.
_UNRESERVED = re.compile(r"[A-Za-z0-9_.~-]*")


@lru_cache(maxsize=256)
def split_path(path: str) -> tuple[str | int, ...]:
    """The steps of ``path``; ValueError for a path with an empty step."""
    if not path:
        return ()
    if not _WHOLE.fullmatch(path):
        raise ValueError(f"bad field path {path!r} (keys joined by dots, [n] for an index)")
    steps: list[str | int] = []
    for part in _SEGMENT.findall(path):
        if part.startswith("["):
            steps.append(int(part[1:-1]))
        elif part.isdigit():
            steps.append(int(part))
        else:
            steps.append(part)
    return tuple(steps)


def get_path(data: Any, path: str) -> Any:
    """The value at ``path`` in ``data``; None when any step is missing."""
    if isinstance(data, dict) and path in data:
        return data[path]  # a plain key (most field paths)
    for step in split_path(path):
        if isinstance(step, int) and isinstance(data, list):
            if step >= len(data):
                return None
            data = data[step]
        elif isinstance(data, dict):
            key = str(step)
            if key not in data:
                return None
            data = data[key]
        else:
            return None
    return data


def template_paths(template: str) -> list[str]:
    """The paths a URL template names (ValueError when it names none)."""
    paths = [m.group(2) for m in _PLACEHOLDER.finditer(template)]
    if not paths:
        raise ValueError(f"url_template {template!r} names no field ({{path}} or {{raw:path}})")
    for p in paths:
        split_path(p)
    return paths


@lru_cache(maxsize=256)
def _compiled(template: str) -> tuple[tuple[str, bool, str], ...]:
    """The template as (literal text before, verbatim?, path) parts; the last part's
    path is empty (the literal tail)."""
    parts: list[tuple[str, bool, str]] = []
    at = 0
    for match in _PLACEHOLDER.finditer(template):
        parts.append((template[at:match.start()], bool(match.group(1)), match.group(2)))
        at = match.end()
    parts.append((template[at:], False, ""))
    return tuple(parts)


def fill_template(template: str, entry: Any) -> str | None:
    """The template with the entry's values; None when one is missing or empty."""
    out: list[str] = []
    for literal, verbatim, path in _compiled(template):
        out.append(literal)
        if not path:
            continue
        value = get_path(entry, path)
        if value is None or value == "" or isinstance(value, (dict, list)):
            return None
        text = str(value).lower() if isinstance(value, bool) else str(value)
        out.append(text if verbatim or _UNRESERVED.fullmatch(text) else quote(text, safe=""))
    return "".join(out)
