"""Turning the chosen blocks back into clean article HTML.

Each block is emitted as one element of a small vocabulary (p, h2-h6, li in
ul/ol, blockquote, pre) holding its own inline markup; images that sit between
the first and the last chosen block are kept as figures. The result still goes
through :func:`tidings.extract.sanitize_html`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

from lxml import etree
from lxml.html import HtmlElement

from tidings.extract.blocks import BLOCK_TAGS, Block

_KEEP_TAGS = {"h2", "h3", "h4", "h5", "h6", "blockquote", "pre"}


def _inline_copy(el: HtmlElement, tag: str) -> HtmlElement:
    """A copy of ``el`` renamed to ``tag`` with nested blocks removed (tails kept)."""
    clone = copy.deepcopy(el)
    clone.tail = None
    clone.attrib.clear()
    clone.tag = tag
    for child in list(clone):
        if isinstance(child.tag, str) and child.tag in BLOCK_TAGS:
            child.drop_tree()
    return clone


def _out_tag(el: HtmlElement) -> str:
    tag = str(el.tag)
    if tag == "h1":
        return "h2"
    if tag in _KEEP_TAGS or tag == "li":
        return tag
    return "p"


def _common_ancestor(elements: Sequence[HtmlElement]) -> HtmlElement:
    path = [*reversed(list(elements[0].iterancestors())), elements[0]]
    for el in elements[1:]:
        ancestors = {*el.iterancestors(), el}
        while path and path[-1] not in ancestors:
            path.pop()
    return path[-1] if path else elements[0].getroottree().getroot()


def _figure(img: HtmlElement) -> HtmlElement:
    figure = etree.Element("figure")
    clone = etree.SubElement(figure, "img")
    for attr in ("src", "alt", "width", "height"):
        if img.get(attr):
            clone.set(attr, img.get(attr))
    return figure


def blocks_to_html(blocks: Sequence[Block]) -> str:
    """HTML of ``blocks`` (document order) plus the images between them."""
    if not blocks:
        return ""
    chosen = {b.element for b in blocks}
    root = _common_ancestor([b.element for b in blocks])
    out: list[HtmlElement] = []
    pending_images: list[HtmlElement] = []
    current_list: tuple[HtmlElement, HtmlElement] | None = None  # (source parent, ul/ol)
    emitted: set[str] = set()  # image sources already inside an emitted block
    for el in root.iter(etree.Element):
        if el in chosen:
            out.extend(pending_images)
            pending_images = []
            tag = _out_tag(el)
            clone = _inline_copy(el, tag)
            emitted.update(str(img.get("src")) for img in clone.iter("img"))
            if tag != "li":
                out.append(clone)
                current_list = None
                continue
            parent = el.getparent()
            if current_list is None or current_list[0] is not parent:
                list_tag = "ol" if parent is not None and parent.tag == "ol" else "ul"
                current_list = (parent, etree.Element(list_tag))
                out.append(current_list[1])
            current_list[1].append(clone)
        elif el.tag == "img" and out and el.get("src") and el.get("src") not in emitted:
            emitted.add(str(el.get("src")))
            pending_images.append(_figure(el))
    return "".join(etree.tostring(el, encoding="unicode", method="html") for el in out)
