"""Selectors proposed for a page without a feed: its dominant repeated link block.

A list page repeats one shape per entry - an ``article.card``, an ``li`` of a
``ul.posts`` - and each copy holds a link with a real title. Every element's
children are grouped by shape (tag and classes); a group scores by how many
members hold an entry-like link (not chrome, not navigation) and how long
their titles are, and the best group becomes ``item``. ``title``, ``date`` and
``summary`` are proposed only when every member has them (a heading, a
``<time>``, a paragraph), and the proposal is kept only if the ``html`` reader
itself reads the page with it - a person then checks it in the preview.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from lxml.html import HtmlElement

from tidings.errors import ParseError
from tidings.readers.selectors import select_all
from tidings.readers.web.config import WebListConfig
from tidings.readers.web.html import (
    ParsedList,
    parse_document,
    parse_html_list,
    read_date,
)
from tidings.readers.web.links import absolute, is_navigation, link_title, page_base

_MIN_MEMBERS = 3
_MIN_TITLE = 12  # characters: "Read more" and "2" are not titles
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_CHROME = frozenset({"nav", "footer", "header", "aside", "form"})


@dataclass(frozen=True, slots=True)
class Proposal:
    config: dict[str, Any]
    parsed: ParsedList


def _shape(el: HtmlElement) -> str:
    """``tag.class1.class2`` (classes sorted, utility-class noise included)."""
    classes = sorted(c for c in (el.get("class") or "").split() if c.isidentifier()
                     or c.replace("-", "_").replace("__", "_").isidentifier())
    return ".".join([str(el.tag), *classes[:3]])


def _entry_links(el: HtmlElement, base: str, url: str) -> list[str]:
    out = []
    for a in el.iter("a"):
        href = absolute(a.get("href"), base)
        if href and not is_navigation(href, url) and len(link_title(a)) >= _MIN_TITLE:
            out.append(href)
    return out


def _in_chrome(el: HtmlElement) -> bool:
    return any(p.tag in _CHROME for p in el.iterancestors()) or el.tag in _CHROME


def _best_group(root: HtmlElement, base: str, url: str) -> list[HtmlElement]:
    best: list[HtmlElement] = []
    best_score = 0.0
    for parent in root.iter():
        if not isinstance(parent.tag, str) or _in_chrome(parent):
            continue
        groups: dict[str, list[HtmlElement]] = defaultdict(list)
        for child in parent:
            if isinstance(child.tag, str):
                groups[_shape(child)].append(child)
        for members in groups.values():
            if len(members) < _MIN_MEMBERS:
                continue
            linked = [m for m in members if len(set(_entry_links(m, base, url))) == 1]
            if len(linked) < 0.7 * len(members):
                continue
            text = sum(len(m.text_content().strip()) for m in linked) / len(linked)
            score = len(linked) * math.log(2 + text)
            if score > best_score:
                best, best_score = linked, score
    return best


def _selector(el: HtmlElement) -> str:
    if el.get("id") and el.get("id", "").isidentifier():
        return f"{el.tag}#{el.get('id')}"
    return _shape(el)


def _item_selector(members: list[HtmlElement]) -> str:
    parent = members[0].getparent()
    own = _shape(members[0])
    if parent is None:
        return own
    chain = [_selector(parent)]
    grand = parent.getparent()
    if grand is not None and not parent.get("id") and grand.tag != "body":
        chain.insert(0, _selector(grand))
    return " > ".join([*chain, own])


def _common(members: list[HtmlElement], *candidates: str) -> str | None:
    """The first tag every member holds (with text)."""
    for tag in candidates:
        if all(any(e.text_content().strip() or e.get("datetime") for e in m.iter(tag))
               for m in members):
            return tag
    return None


def _date_shape(members: list[HtmlElement]) -> str | None:
    """The shape of an element whose whole text is a date, in every member."""
    for el in members[0].iter():
        if not isinstance(el.tag, str) or el is members[0] or len(el):
            continue
        text = el.text_content().strip()
        if not text or len(text) > 40 or read_date(text) is None:
            continue
        shape = _shape(el)
        if all(select_all(m, shape) for m in members):
            return shape
    return None


def propose_web_list(text: str, url: str) -> Proposal | None:
    """Selectors for the page's list of entries, or None when it has no repeated block."""
    root = parse_document(text, url)
    base = page_base(root, url)
    members = _best_group(root, base, url)
    if not members:
        return None
    config: dict[str, Any] = {"item": _item_selector(members)}
    title = _common(members, *_HEADINGS)
    if title:
        config["title"] = title
    date = "time" if _common(members, "time") else _date_shape(members)
    if date:
        config["date"] = date
    if _common(members, "p"):
        config["summary"] = "p"
    try:
        parsed = parse_html_list(text, url, WebListConfig.model_validate(config))
    except (ParseError, ValueError):
        return None
    return Proposal(config, parsed)
