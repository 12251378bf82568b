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
# Teaser lists: at least this many sibling "cards" (a linked headline with a
# short blurb), making up most of their parent's children.
_HEADLINE_LENGTH = 5.0
_LEAD_LINK_LENGTH = 20
_LEAD_LINK_SHARE = 0.1
_CARD_LENGTH = 700.0
_MIN_CARDS = 3
_CARD_SHARE = 0.75
# Of several <article> elements, the first holding at least this share of the
# best one's value is the page's own story.
_ARTICLE_SHARE = 0.5
_PROSE_TAGS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "a"})


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


def _is_link_block(block: Block) -> bool:
    """A block that is a link, or opens with a linked headline (a flat teaser)."""
    if block.length < _HEADLINE_LENGTH:
        return False
    if block.link_density > 0.5:
        return True
    el = block.element
    if (el.text or "").strip() or len(el) == 0 or el[0].tag != "a":
        return False
    lead = len(el[0].text_content().strip())
    return lead >= _LEAD_LINK_LENGTH and block.link_density >= _LEAD_LINK_SHARE


def _is_card(node: _Node) -> bool:
    """A short unit led by a linked headline: one teaser of a list of stories."""
    return node.link_blocks + node.anchors > 0 and node.length <= _CARD_LENGTH


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
    link_blocks: int = 0  # blocks in the subtree that are mostly one link (headlines)
    anchors: int = 0  # links without text (around an image)
    items: int = 0  # children holding text
    cards: int = 0  # children that look like teaser cards
    teaser: bool = False


@dataclass(frozen=True, slots=True)
class DensityResult:
    root: HtmlElement | None
    blocks: tuple[Block, ...]  # the article's blocks, in document order
    score: float
    all_blocks: tuple[Block, ...] = ()  # every block of the page, in document order


def _aggregate(root: HtmlElement, blocks: Iterable[Block]) -> dict[HtmlElement, _Node]:
    nodes: dict[HtmlElement, _Node] = {}
    for block in blocks:
        node = nodes.setdefault(block.element, _Node())
        node.length, node.link_length, node.punct = block.length, block.link_length, block.punct
        node.summed = block_score(block)
        node.link_blocks = int(_is_link_block(block))
    for _event, el in etree.iterwalk(root, events=("end",)):
        if not isinstance(el.tag, str):
            continue
        node = nodes.setdefault(el, _Node())
        if el.tag == "a" and el.get("href") and not "".join(el.itertext()).strip():
            node.anchors += 1
        whole = text_score(node.length, node.link_length, node.punct)
        node.value = max(whole, node.summed)
        if node.cards >= _MIN_CARDS and node.cards >= _CARD_SHARE * node.items:
            node.teaser = True
            node.value = -node.length
        parent = el.getparent()
        if parent is None or el is root:
            continue
        up = nodes.setdefault(parent, _Node())
        up.length += node.length
        up.link_length += node.link_length
        up.punct += node.punct
        up.summed += node.value
        up.link_blocks += node.link_blocks
        up.anchors += node.anchors
        if node.length > 0:
            up.items += 1
            up.cards += int(el.tag not in _PROSE_TAGS and _is_card(node))
    return nodes


def _excluded(el: HtmlElement, root: HtmlElement, nodes: dict[HtmlElement, _Node]) -> bool:
    """True when ``el`` or an ancestor below ``root`` is a link-heavy negative subtree."""
    while el is not None and el is not root:
        node = nodes.get(el)
        if node is not None and (
            node.teaser or (node.value < 0 and node.link_length > 0.3 * node.length)
        ):
            return True
        el = el.getparent()
    return False


def density_extract(root: HtmlElement) -> DensityResult:
    """Find the article under ``root`` (an already cleaned tree)."""
    all_blocks = tuple(iter_blocks(root))
    if not all_blocks:
        return DensityResult(None, (), 0.0)
    nodes = _aggregate(root, all_blocks)
    best, best_node = max(nodes.items(), key=lambda item: item[1].value)
    best, best_node = _first_of_articles(best, best_node, nodes)
    kept = tuple(
        b
        for b in all_blocks
        if _inside(b.element, best)
        and not (block_score(b) < 0 and b.link_density > 0.5)
        and not _excluded(b.element, best, nodes)
    )
    return DensityResult(best, kept, best_node.value, all_blocks)


def _first_of_articles(
    best: HtmlElement, best_node: _Node, nodes: dict[HtmlElement, _Node]
) -> tuple[HtmlElement, _Node]:
    """The first of several substantial ``<article>`` elements inside ``best``.

    Pages that load the next story below the current one hold both in one
    container, which outscores either; the page's own story comes first.
    """
    articles = [
        (el, nodes[el])
        for el in best.iterdescendants("article")
        if el in nodes and nodes[el].value > 0 and el.find(".//article") is None
    ]
    if len(articles) < 2:
        return best, best_node
    top = max(node.value for _el, node in articles)
    return next((el, node) for el, node in articles if node.value >= _ARTICLE_SHARE * top)


def _inside(el: HtmlElement, ancestor: HtmlElement) -> bool:
    node: HtmlElement | None = el
    while node is not None:
        if node is ancestor:
            return True
        node = node.getparent()
    return False
