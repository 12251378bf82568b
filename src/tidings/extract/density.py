"""The text-density scorer (R-EXTRACT-1): our own extractor and tie-breaker.

Every block gets a score from its weighted text length, its punctuation density
(Latin and CJK marks), its link density and its kind: prose scores positive,
link lists and short unpunctuated labels negative. Scores are aggregated bottom
up: a node's value is the better of its score as one whole (its total text,
links and punctuation taken together) and its own text plus the sum of its
children. The best-valued node is the article; inside it, subtrees that are
mostly links and score below zero are left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lxml import etree
from lxml.html import HtmlElement

from tidings.extract.blocks import HEADINGS, Block, iter_blocks

# Punctuation marks per weighted character that make text read as prose: about
# one mark every 40 characters (a comma or full stop; a CJK sentence has more).
_PROSE_PUNCT_RATE = 1 / 40
_LABEL_LENGTH = 80.0  # a shorter block without punctuation reads as a label


def text_score(length: float, link_length: float, punct: int) -> float:
    """Score of a piece of text from its figures (see module docstring)."""
    if length <= 0:
        return 0.0
    link_density = min(1.0, link_length / length)
    if link_density > 0.5:
        return -length * link_density - 10.0
    if punct <= 1 and length < _LABEL_LENGTH:
        return -5.0
    prose = min(1.0, punct / (length * _PROSE_PUNCT_RATE))
    return length * (1.0 - link_density) ** 2 * (0.3 + 0.7 * prose)


def block_score(block: Block) -> float:
    if block.tag in HEADINGS:
        return 0.0
    return text_score(block.length, block.link_length, block.punct)


@dataclass(slots=True)
class _Node:
    length: float = 0.0
    link_length: float = 0.0
    punct: int = 0
    summed: float = 0.0  # own block score plus children's values
    value: float = 0.0


@dataclass(frozen=True, slots=True)
class DensityResult:
    root: HtmlElement | None
    blocks: tuple[Block, ...]  # the article's blocks, in document order
    score: float


def _aggregate(root: HtmlElement, blocks: Iterable[Block]) -> dict[HtmlElement, _Node]:
    nodes: dict[HtmlElement, _Node] = {}
    for block in blocks:
        node = nodes.setdefault(block.element, _Node())
        node.length, node.link_length, node.punct = block.length, block.link_length, block.punct
        node.summed = block_score(block)
    for _event, el in etree.iterwalk(root, events=("end",)):
        if not isinstance(el.tag, str):
            continue
        node = nodes.setdefault(el, _Node())
        whole = text_score(node.length, node.link_length, node.punct)
        node.value = max(whole, node.summed)
        parent = el.getparent()
        if parent is None or el is root:
            continue
        up = nodes.setdefault(parent, _Node())
        up.length += node.length
        up.link_length += node.link_length
        up.punct += node.punct
        up.summed += node.value
    return nodes


def _excluded(el: HtmlElement, root: HtmlElement, nodes: dict[HtmlElement, _Node]) -> bool:
    """True when ``el`` or an ancestor below ``root`` is a link-heavy negative subtree."""
    while el is not None and el is not root:
        node = nodes.get(el)
        if node is not None and node.value < 0 and node.link_length > 0.3 * node.length:
            return True
        el = el.getparent()
    return False


def density_extract(root: HtmlElement) -> DensityResult:
    """Find the article under ``root`` (an already cleaned tree)."""
    all_blocks = list(iter_blocks(root))
    if not all_blocks:
        return DensityResult(None, (), 0.0)
    nodes = _aggregate(root, all_blocks)
    best, best_node = max(nodes.items(), key=lambda item: item[1].value)
    kept = tuple(
        b
        for b in all_blocks
        if _inside(b.element, best)
        and not (block_score(b) < 0 and b.link_density > 0.5)
        and not _excluded(b.element, best, nodes)
    )
    return DensityResult(best, kept, best_node.value)


def _inside(el: HtmlElement, ancestor: HtmlElement) -> bool:
    node: HtmlElement | None = el
    while node is not None:
        if node is ancestor:
            return True
        node = node.getparent()
    return False
