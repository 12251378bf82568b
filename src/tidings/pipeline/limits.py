"""Size limits on every stored field of an item (docs/storage.md, "Field limits").

A publisher decides how long its titles are: a 7,000,000-character ``<title>``
was stored whole, and every list page then weighed 7.6 MB (issue 16). Each
field is bounded here, once, on the way from a reader to ``upsert_items``; text
cut short ends with :data:`MARK` so a reader sees that something is missing,
and the run records a warning naming the fields. Limits are in characters and
sit far above anything a real feed sends, so only hostile or broken input
meets them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tidings.model import ItemData

MARK = "…[truncated]"
TITLE_MAX = 1_000
AUTHOR_MAX = 300
SUMMARY_MAX = 20_000
BODY_MAX = 2_000_000
URL_MAX = 4_096  # longer links are dropped, not cut: a cut link leads nowhere
GUID_MAX = 1_000
CATEGORY_MAX = 100
CATEGORIES_MAX = 50
IMAGES_MAX = 50
RAW_VALUE_MAX = 2_000  # each text value kept in ``raw`` (the reader's extra fields)
RAW_KEYS_MAX = 50


def cut(text: str, limit: int) -> str:
    """``text`` if it fits, else its start and :data:`MARK` within ``limit`` characters."""
    if len(text) <= limit:
        return text
    return text[:limit - len(MARK)] + MARK


def _raw(raw: Mapping[str, Any]) -> dict[str, Any] | None:
    """A bounded copy of ``raw``, or None when it is within bounds already."""
    if len(raw) <= RAW_KEYS_MAX and all(
            not isinstance(v, str | list | dict) or len(v) <= RAW_VALUE_MAX
            for v in raw.values()):
        return None
    out: dict[str, Any] = {}
    for key, value in list(raw.items())[:RAW_KEYS_MAX]:
        if isinstance(value, str):
            out[key] = cut(value, RAW_VALUE_MAX)
        elif isinstance(value, list | dict) and len(value) > RAW_VALUE_MAX:
            out[key] = MARK
        else:
            out[key] = value
    return out


def bound_item(item: ItemData) -> tuple[ItemData, tuple[str, ...]]:
    """``item`` within the limits, and the names of the fields that were cut."""
    changes: dict[str, Any] = {}
    for name, limit in (("title", TITLE_MAX), ("author", AUTHOR_MAX),
                        ("summary", SUMMARY_MAX)):
        value: str = getattr(item, name)
        if len(value) > limit:
            changes[name] = cut(value, limit)
    if item.body is not None and len(item.body) > BODY_MAX:
        changes["body"] = cut(item.body, BODY_MAX)
    if item.url is not None and len(item.url) > URL_MAX:
        changes["url"] = None
    if item.guid is not None and len(item.guid) > GUID_MAX:
        changes["guid"] = cut(item.guid, GUID_MAX)
    if len(item.categories) > CATEGORIES_MAX or any(
            len(c) > CATEGORY_MAX for c in item.categories):
        changes["categories"] = tuple(cut(c, CATEGORY_MAX)
                                      for c in item.categories[:CATEGORIES_MAX])
    if len(item.images) > IMAGES_MAX or any(len(i) > URL_MAX for i in item.images):
        changes["images"] = tuple(i for i in item.images[:IMAGES_MAX] if len(i) <= URL_MAX)
    raw = _raw(item.raw)
    if raw is not None:
        changes["raw"] = raw
    if not changes:
        return item, ()
    return replace(item, **changes), tuple(changes)


def bound_items(items: tuple[ItemData, ...]) -> tuple[tuple[ItemData, ...], str | None]:
    """Every item within the limits, and the run's warning if any was cut."""
    out: list[ItemData] = []
    cut_fields: dict[str, int] = {}
    for item in items:
        bounded, names = bound_item(item)
        out.append(bounded)
        for name in names:
            cut_fields[name] = cut_fields.get(name, 0) + 1
    if not cut_fields:
        return items, None
    named = ", ".join(f"{name} ({n})" for name, n in sorted(cut_fields.items()))
    return tuple(out), f"oversized fields were truncated (links dropped): {named}"
