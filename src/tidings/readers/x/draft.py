"""X long-form articles arrive as Draft.js content (blocks + entity map): made HTML here.

The rendering is draftjs-exporter's (blocks, list wrappers and nesting by depth,
overlapping inline styles, entities); what is ours is the reading of an answer we
do not trust: only well-formed blocks, ranges inside their text, links to http(s)
pages and images on https go to the exporter, so nothing an answer holds can make
it raise or emit a ``javascript:`` link. The subset X uses: paragraphs, headings,
lists, quotes, code, links, bold and italic, images as atomic blocks. The
library was measured against the renderer it replaced (docs/benchmarks.md,
``benchmarks/draft_render.py``): the same HTML on the golden article, slower per
article but rendered once per item.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the exporter itself is imported on the first article (_exporter)
    from draftjs_exporter.html import HTML
    from draftjs_exporter.types import (
        Block,
        Element,
        EntityMap,
        EntityRange,
        InlineStyleRange,
        Props,
    )

_HEADINGS = {"header-one": "h2", "header-two": "h3", "header-three": "h4",
             "header-four": "h5", "header-five": "h6", "header-six": "h6"}
_LISTS = {"unordered-list-item", "ordered-list-item"}
_STYLES = {"BOLD": "strong", "Bold": "strong", "ITALIC": "em", "Italic": "em", "CODE": "code"}
#: Draft.js's entity types (draftjs_exporter.constants.ENTITY_TYPES)
_LINK, _IMAGE = "LINK", "IMAGE"


def _link(props: Props) -> Element:
    from draftjs_exporter.dom import DOM

    return DOM.create_element("a", {"href": props["url"]}, props["children"])


def _image(props: Props) -> Element:
    from draftjs_exporter.dom import DOM

    return DOM.create_element("img", {"src": props["src"], "alt": ""})


def _figure(props: Props) -> Element:
    from draftjs_exporter.dom import DOM

    return DOM.create_element("p", {}, props["children"])


@functools.cache
def _exporter() -> HTML:
    """The exporter, made on the first article: importing the library costs every
    process start (each CLI command) more than rendering an article does."""
    from draftjs_exporter.constants import BLOCK_TYPES, ENTITY_TYPES, INLINE_STYLES
    from draftjs_exporter.defaults import render_children
    from draftjs_exporter.dom import DOM
    from draftjs_exporter.html import HTML

    return HTML({
        "block_map": {
            BLOCK_TYPES.UNSTYLED: "p", "paragraph": "p", **_HEADINGS,
            BLOCK_TYPES.UNORDERED_LIST_ITEM: {"element": "li", "wrapper": "ul"},
            BLOCK_TYPES.ORDERED_LIST_ITEM: {"element": "li", "wrapper": "ol"},
            BLOCK_TYPES.BLOCKQUOTE: "blockquote", BLOCK_TYPES.CODE: "pre",
            BLOCK_TYPES.ATOMIC: _figure, BLOCK_TYPES.FALLBACK: "p",
        },
        "style_map": {**_STYLES, INLINE_STYLES.FALLBACK: render_children},
        "entity_decorators": {ENTITY_TYPES.LINK: _link, ENTITY_TYPES.IMAGE: _image,
                              ENTITY_TYPES.FALLBACK: render_children},
        "engine": DOM.STRING,
    })


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
    return (start, length) if 0 <= start < start + length <= len(text) else None


def _entity_map(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return {str(k): v for k, v in raw.items()}
    if isinstance(raw, list):  # some exports list {"key": ..., "value": ...} pairs
        return {str(e.get("key")): e.get("value") for e in raw if isinstance(e, Mapping)}
    return {}


def _entity_url(ref: Any, entities: Mapping[str, Any]) -> str | None:
    entity = entities.get(str(ref.get("key"))) if isinstance(ref, Mapping) else None
    data = entity.get("data") if isinstance(entity, Mapping) else None
    url = (data.get("url") or data.get("src")) if isinstance(data, Mapping) else None
    return url if isinstance(url, str) else None


class _Clean:
    """The content state rebuilt from what an answer holds that can be shown."""

    def __init__(self, content: Mapping[str, Any]) -> None:
        self.source = _entity_map(content.get("entityMap"))
        self.entities: EntityMap = {}
        self.blocks: list[Block] = []

    def _entity(self, kind: str, data: dict[str, str]) -> int:
        key = len(self.entities)
        self.entities[str(key)] = {"type": kind, "mutability": "MUTABLE", "data": data}
        return key

    def _links(self, block: Mapping[str, Any], text: str) -> list[EntityRange]:
        out: list[EntityRange] = []
        for ref in _seq(block.get("entityRanges")):
            url, span = _entity_url(ref, self.source), _range(ref, text)
            if url and url.startswith(("http://", "https://")) and span:
                key = self._entity(_LINK, {"url": url})
                out.append({"offset": span[0], "length": span[1], "key": key})
        return out

    def _image(self, block: Mapping[str, Any]) -> None:
        for ref in _seq(block.get("entityRanges")):
            url = _entity_url(ref, self.source)
            if url and url.startswith("https://"):
                key = self._entity(_IMAGE, {"src": url})
                self.blocks.append({"key": str(len(self.blocks)), "type": "atomic", "text": " ",
                                    "depth": 0, "inlineStyleRanges": [], "data": {},
                                    "entityRanges": [{"offset": 0, "length": 1, "key": key}]})
                return

    def add(self, block: Any) -> None:
        if not isinstance(block, Mapping):
            return
        kind, text = str(block.get("type") or "unstyled"), str(block.get("text") or "")
        if kind == "atomic":
            self._image(block)
            return
        if kind not in _LISTS and not text.strip():
            return
        styles: list[InlineStyleRange] = [
            {"offset": span[0], "length": span[1], "style": s["style"]}
            for s in _seq(block.get("inlineStyleRanges"))
            if (span := _range(s, text)) and s.get("style") in _STYLES]
        depth = _num(block.get("depth")) if kind in _LISTS else 0
        self.blocks.append({"key": str(len(self.blocks)), "type": kind, "text": text,
                            "depth": min(max(depth, 0), 4), "data": {},
                            "inlineStyleRanges": styles,
                            "entityRanges": self._links(block, text)})


def draft_to_html(content: Mapping[str, Any]) -> str:
    """The HTML of a Draft.js raw content state (unknown block types as paragraphs)."""
    clean = _Clean(content)
    for block in _seq(content.get("blocks")):
        clean.add(block)
    if not clean.blocks:
        return ""
    return _exporter().render({"blocks": clean.blocks, "entityMap": clean.entities})
