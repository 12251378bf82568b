"""The Draft.js renderer tidings wrote before it took draftjs-exporter (issue 28, item 6).

Kept here only as the peer of ``benchmarks/draft_render.py``: the product renders
with ``tidings.readers.x.draft`` (the library), this is what it is measured against.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

_BLOCK_TAGS = {
    "unstyled": "p", "paragraph": "p", "header-one": "h2", "header-two": "h3",
    "header-three": "h4", "header-four": "h5", "header-five": "h6", "header-six": "h6",
    "blockquote": "blockquote", "code-block": "pre",
}
_LISTS = {"unordered-list-item": "ul", "ordered-list-item": "ol"}
_STYLES = {"BOLD": "strong", "Bold": "strong", "ITALIC": "em", "Italic": "em", "CODE": "code"}


def _seq(value: Any) -> list[Any]:
    """A list field of the answer, or nothing when it is anything else."""
    return value if isinstance(value, list) else []


def _num(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def _range(entry: Any, text: str) -> tuple[int, int] | None:
    """A range of an entry (offset, length) when it lies inside ``text``."""
    if not isinstance(entry, Mapping):
        return None
    start, length = _num(entry.get("offset")), _num(entry.get("length"))
    return (start, start + length) if 0 <= start < start + length <= len(text) else None


def _marks(block: Mapping[str, Any], entities: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Per character of the block's text, the opening and closing markup around it."""
    text = str(block.get("text") or "")
    opens, closes = [""] * (len(text) + 1), [""] * (len(text) + 1)
    for style in _seq(block.get("inlineStyleRanges")):
        tag = _STYLES.get(str(style.get("style"))) if isinstance(style, Mapping) else None
        span = _range(style, text)
        if tag and span:
            opens[span[0]] += f"<{tag}>"
            closes[span[1]] = f"</{tag}>" + closes[span[1]]
    for ref in _seq(block.get("entityRanges")):
        url = _entity_url(ref, entities)
        span = _range(ref, text)
        if url and url.startswith(("http://", "https://")) and span:
            opens[span[0]] += f'<a href="{escape(url)}">'
            closes[span[1]] = "</a>" + closes[span[1]]
    return list(zip(opens, closes, strict=True))


def _inline(block: Mapping[str, Any], entities: Mapping[str, Any]) -> str:
    text = str(block.get("text") or "")
    marks = _marks(block, entities)
    out = [marks[0][0]]
    for i, char in enumerate(text):
        out.append(escape(char))
        out.append(marks[i + 1][1] + (marks[i + 1][0] if i + 1 < len(text) else ""))
    return "".join(out)


def _entity_url(ref: Any, entities: Mapping[str, Any]) -> str | None:
    entity = entities.get(str(ref.get("key"))) if isinstance(ref, Mapping) else None
    data = entity.get("data") if isinstance(entity, Mapping) else None
    url = (data.get("url") or data.get("src")) if isinstance(data, Mapping) else None
    return url if isinstance(url, str) else None


def _image(block: Mapping[str, Any], entities: Mapping[str, Any]) -> str:
    for ref in _seq(block.get("entityRanges")):
        url = _entity_url(ref, entities)
        if url and url.startswith("https://"):
            return f'<p><img src="{escape(url)}" alt=""></p>'
    return ""


def _entity_map(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return {str(k): v for k, v in raw.items()}
    if isinstance(raw, list):  # some exports list {"key": ..., "value": ...} pairs
        return {str(e.get("key")): e.get("value") for e in raw if isinstance(e, Mapping)}
    return {}


def draft_to_html(content: Mapping[str, Any]) -> str:
    """The HTML of a Draft.js raw content state (unknown block types as paragraphs)."""
    entities = _entity_map(content.get("entityMap"))
    out: list[str] = []
    open_list = ""
    for block in _seq(content.get("blocks")):
        if not isinstance(block, Mapping):
            continue
        kind = str(block.get("type") or "unstyled")
        wanted = _LISTS.get(kind, "")
        if wanted != open_list:
            out.append(f"</{open_list}>" if open_list else "")
            out.append(f"<{wanted}>" if wanted else "")
            open_list = wanted
        if wanted:
            out.append(f"<li>{_inline(block, entities)}</li>")
        elif kind == "atomic":
            out.append(_image(block, entities))
        elif str(block.get("text") or "").strip():
            tag = _BLOCK_TAGS.get(kind, "p")
            out.append(f"<{tag}>{_inline(block, entities)}</{tag}>")
    if open_list:
        out.append(f"</{open_list}>")
    return "".join(out)
