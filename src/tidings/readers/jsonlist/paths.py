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


def fill_template(template: str, entry: Any) -> str | None:
    """The template with the entry's values; None when one is missing or empty."""
    missing = False

    def one(match: re.Match[str]) -> str:
        nonlocal missing
        value = get_path(entry, match.group(2))
        if value is None or value == "" or isinstance(value, (dict, list)):
            missing = True
            return ""
        text = str(value).lower() if isinstance(value, bool) else str(value)
        return text if match.group(1) else quote(text, safe="")

    out = _PLACEHOLDER.sub(one, template)
    return None if missing else out
