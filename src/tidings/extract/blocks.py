"""The page as a sequence of text blocks, the unit every extraction step works on.

Each text node of the page belongs to exactly one block: its nearest block-level
ancestor. A block records its own text (inline descendants included, nested
blocks excluded), how much of it is link text and how many punctuation marks
it holds. Lengths are *weighted*: a CJK character counts as several Latin ones
because it carries about a word's worth of meaning, so thresholds tuned on
English do not reject short Chinese articles.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from lxml import etree
from lxml.html import HtmlElement

from tidings.textutil import collapse_ws

CJK_WEIGHT = 3.0

BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "center", "dd",
        "details", "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure",
        "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "html", "li",
        "main", "menu", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody",
        "td", "tfoot", "th", "thead", "tr", "ul",
    }
)  # fmt: skip
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})

# Sentence punctuation, Latin and CJK (full-width forms and CJK brackets).
_PUNCT = re.compile(
    r"[.,;:!?\u2026\u3001\u3002\uff0c\uff1b\uff1a\uff01\uff1f\u300c\u300d\u201c\u201d]"
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def weighted_len(text: str) -> float:
    """Length with CJK characters weighted (see module docstring)."""
    cjk = len(_CJK.findall(text))
    return len(text) - cjk + cjk * CJK_WEIGHT


def punct_count(text: str) -> int:
    return len(_PUNCT.findall(text))


@dataclass(slots=True)
class Block:
    """One block's own text and the figures the scorers need."""

    element: HtmlElement
    text: str
    length: float  # weighted
    link_length: float  # weighted length of the text inside <a>
    punct: int
    index: int  # position in document order

    @property
    def link_density(self) -> float:
        return self.link_length / self.length if self.length else 0.0

    @property
    def tag(self) -> str:
        return str(self.element.tag)


def _inline_text(el: HtmlElement, parts: list[str], links: list[str], in_link: bool) -> None:
    """Text of an inline element and its inline descendants (not its tail)."""
    link = in_link or el.tag == "a"
    if el.tag == "br":
        parts.append("\n")
    if el.text:
        parts.append(el.text)
        if link:
            links.append(el.text)
    for child in el:
        if not isinstance(child.tag, str):
            _tail(child, parts, links, link)
            continue
        if child.tag in BLOCK_TAGS:
            _tail(child, parts, links, link)
            continue
        _inline_text(child, parts, links, link)
        _tail(child, parts, links, link)


def _tail(el: HtmlElement, parts: list[str], links: list[str], in_link: bool) -> None:
    if el.tail:
        parts.append(el.tail)
        if in_link:
            links.append(el.tail)


def own_text(el: HtmlElement, in_link: bool = False) -> tuple[str, str]:
    """The block's own text and the part of it inside links.

    ``in_link`` says the block sits inside an ``<a>`` (a card whose whole
    headline ``<div>`` is a link): its text is then link text throughout.
    """
    parts: list[str] = []
    links: list[str] = []
    _inline_text(el, parts, links, in_link)
    text = "\n".join(collapse_ws(line) for line in "".join(parts).split("\n"))
    return text.strip("\n"), collapse_ws("".join(links))


def iter_blocks(root: HtmlElement) -> Iterator[Block]:
    """Blocks under ``root`` (itself included) in document order; empty ones skipped."""
    index = 0
    linked = {inner for a in root.iter("a") for inner in a.iter(etree.Element)}
    root_linked = any(anc.tag == "a" for anc in root.iterancestors())
    for el in root.iter(etree.Element):
        if el.tag not in BLOCK_TAGS:
            continue
        text, link_text = own_text(el, root_linked or el in linked)
        if not text.strip():
            continue
        yield Block(el, text, weighted_len(text), weighted_len(link_text), punct_count(text), index)
        index += 1
