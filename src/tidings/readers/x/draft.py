"""X long-form articles arrive as Draft.js content (blocks + entity map): made HTML here.

No maintained Python library renders Draft.js's raw format (the renderers are
JavaScript), and the subset X uses is small: paragraphs, headings, lists, quotes,
code, links, bold and italic, images as atomic blocks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

_BLOCK_TAGS = {
    "unstyled": "p", "paragraph": "p", "header-one": "h2", "header-two": "h3",
    "header-three": "h4", "header-four": "h5", "header-five": "h6", "header-six": "h6",
    "blockquote": "blockquote", "code-block": "pre",
}
_LISTS = {"unordered-list-item": "ul", "ordered-list-item": "ol"}
_STYLES = {"BOLD": "strong", "Bold": "strong", "ITALIC": "em", "Italic": "em", "CODE": "code"}


def _marks(block: Mapping[str, Any], entities: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Per character of the block's text, the opening and closing markup around it."""
    text = str(block.get("text") or "")
    opens, closes = [""] * (len(text) + 1), [""] * (len(text) + 1)
    for style in block.get("inlineStyleRanges") or ():
        tag = _STYLES.get(str(style.get("style")))
        start, length = int(style.get("offset", 0)), int(style.get("length", 0))
        if tag and 0 <= start < start + length <= len(text):
            opens[start] += f"<{tag}>"
            closes[start + length] = f"</{tag}>" + closes[start + length]
    for ref in block.get("entityRanges") or ():
        entity = entities.get(str(ref.get("key")))
        data = entity.get("data", {}) if isinstance(entity, Mapping) else {}
        url = data.get("url") if isinstance(data, Mapping) else None
        start, length = int(ref.get("offset", 0)), int(ref.get("length", 0))
        if isinstance(url, str) and url.startswith(("http://", "https://")) \
                and 0 <= start < start + length <= len(text):
            opens[start] += f'<a href="{escape(url)}">'
            closes[start + length] = "</a>" + closes[start + length]
    return list(zip(opens, closes, strict=True))


def _inline(block: Mapping[str, Any], entities: Mapping[str, Any]) -> str:
    text = str(block.get("text") or "")
    marks = _marks(block, entities)
    out = [marks[0][0]]
    for i, char in enumerate(text):
        out.append(escape(char))
        out.append(marks[i + 1][1] + (marks[i + 1][0] if i + 1 < len(text) else ""))
    return "".join(out)


def _image(block: Mapping[str, Any], entities: Mapping[str, Any]) -> str:
    for ref in block.get("entityRanges") or ():
        entity = entities.get(str(ref.get("key")))
        data = entity.get("data", {}) if isinstance(entity, Mapping) else {}
        url = data.get("url") or data.get("src") if isinstance(data, Mapping) else None
        if isinstance(url, str) and url.startswith("https://"):
            return f'<p><img src="{escape(url)}" alt=""></p>'
    return ""


def _entity_map(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return {str(k): v for k, v in raw.items()}
    if isinstance(raw, Sequence):  # some exports list {"key": ..., "value": ...} pairs
        return {str(e.get("key")): e.get("value") for e in raw if isinstance(e, Mapping)}
    return {}


def draft_to_html(content: Mapping[str, Any]) -> str:
    """The HTML of a Draft.js raw content state (unknown block types as paragraphs)."""
    entities = _entity_map(content.get("entityMap"))
    out: list[str] = []
    open_list = ""
    for block in content.get("blocks") or ():
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
