"""Main-text extraction of an article page (R-EXTRACT-1).

Three extractors read the same parsed page: trafilatura in recall mode and in
precision mode (both in its fast mode, without its internal fallbacks) and our
text-density scorer. The one the other two agree with most wins
(:mod:`tidings.extract.combine`); see docs/extraction.md for the measurements
behind this choice. A per-source CSS selector bypasses all of them.

The winning text is mapped back onto the page's blocks to build the HTML, so
images, links and emphasis inside the article survive into the sanitized copy.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import lxml.html
import trafilatura
from lxml import etree
from lxml.html import HtmlElement

from tidings.errors import ParseError
from tidings.extract.blocks import Block, iter_blocks
from tidings.extract.clean import clean_tree, drop_selected, fix_lazy_images, select
from tidings.extract.combine import Arbitration, Candidate, arbitrate, supported_blocks
from tidings.extract.density import density_extract
from tidings.extract.metadata import extract_metadata
from tidings.extract.render import blocks_to_html
from tidings.extract.sanitize import sanitize_html
from tidings.model import BodyState

MIN_BODY_CHARS = 200
# A body whose blocks are mostly link text is a list of links, not an article.
_MAX_BODY_LINK_DENSITY = 0.5


@dataclass(frozen=True, slots=True)
class Extraction:
    """What extraction found on one page."""

    html: str  # sanitized article HTML
    text: str  # plain text, paragraphs separated by newlines
    state: BodyState  # OK or UNCONFIRMED
    method: str  # "selector", "trafilatura-recall", "trafilatura-precision", "density", "none"
    title: str | None = None
    author: str | None = None
    published_at: datetime | None = None
    language: str | None = None
    lead_image: str | None = None


def parse_page(html: str, url: str = "") -> HtmlElement:
    """Parse a whole page; raises ParseError for input that holds no document."""
    if not html or not html.strip():
        raise ParseError("empty page", url or None)
    try:
        return lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError) as exc:
        raise ParseError(f"not an HTML page: {exc}", url or None) from exc


def _trafilatura(root: HtmlElement, url: str, *, precision: bool) -> str:
    text = trafilatura.extract(
        root,
        url=url or None,
        fast=True,
        favor_precision=precision,
        favor_recall=not precision,
        include_comments=False,
        include_tables=True,
        deduplicate=False,
    )
    return text or ""


def _candidates(root: HtmlElement, url: str) -> tuple[Arbitration | None, list[Block], list[Block]]:
    """The chosen text, all blocks of the cleaned page and the density blocks."""
    recall = Candidate("trafilatura-recall", _trafilatura(root, url, precision=False))
    precision = Candidate("trafilatura-precision", _trafilatura(root, url, precision=True))
    clean_tree(root)
    density = density_extract(root)
    dense = Candidate("density", "\n".join(b.text for b in density.blocks))
    return arbitrate(recall, precision, dense), list(density.all_blocks), list(density.blocks)


def _select_body(root: HtmlElement, selector: str) -> list[Block]:
    blocks: list[Block] = []
    for container in select(root, selector):
        clean_tree(container, keep_chrome=True)
        blocks.extend(iter_blocks(container))
    return blocks


def _state(text: str, blocks: Sequence[Block]) -> BodyState:
    if len(text.strip()) < MIN_BODY_CHARS:
        return BodyState.UNCONFIRMED
    length = sum(b.length for b in blocks)
    links = sum(b.link_length for b in blocks)
    if length and links / length > _MAX_BODY_LINK_DENSITY:
        return BodyState.UNCONFIRMED
    return BodyState.OK


def extract_article(
    html: str,
    url: str,
    *,
    body_selector: str | None = None,
    remove_selectors: Sequence[str] = (),
) -> Extraction:
    """Extract the main article of ``html`` (the page found at ``url``).

    ``body_selector`` and ``remove_selectors`` are a source's CSS overrides:
    the first names the body container, the others name parts to drop first.
    Raises ParseError for an empty page and ConfigError for a bad selector.
    """
    root = parse_page(html, url)
    meta = extract_metadata(root, url)
    page = copy.deepcopy(root)
    fix_lazy_images(page)
    _remove_selectors(page, remove_selectors)
    if body_selector:
        blocks = _select_body(page, body_selector)
        text, method = "\n".join(b.text for b in blocks), "selector"
    else:
        chosen, all_blocks, dense_blocks = _candidates(page, url)
        text = chosen.text if chosen else ""
        method = chosen.method if chosen else "none"
        if method != "density":
            blocks = supported_blocks(all_blocks, text)
        elif chosen is not None and chosen.extended:
            blocks = supported_blocks(dense_blocks, text)
        else:
            blocks = dense_blocks
    body_html = sanitize_html(blocks_to_html(blocks), url)
    lead_image = meta.lead_image or _first_image(body_html)
    return Extraction(
        html=body_html,
        text=text.strip(),
        state=_state(text, blocks),
        method=method,
        title=meta.title,
        author=meta.author,
        published_at=meta.published_at,
        language=meta.language,
        lead_image=lead_image,
    )


def _remove_selectors(root: HtmlElement, selectors: Sequence[str]) -> None:
    if selectors:
        drop_selected(root, selectors)


def _first_image(body_html: str) -> str | None:
    if "<img" not in body_html:
        return None
    fragment = lxml.html.fragment_fromstring(body_html, create_parent="div")
    for img in fragment.iter("img"):
        src = img.get("src")
        if src:
            return str(src)
    return None


def body_text(html: str, url: str) -> str:
    """Plain text of the main body of ``html`` ('' when the page is empty)."""
    try:
        root = parse_page(html, url)
    except ParseError:
        return ""
    chosen, _blocks, _dense = _candidates(root, url)
    return chosen.text.strip() if chosen else ""
