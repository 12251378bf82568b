"""``changelog`` mode (R-WEB-3): a Docusaurus-style page of dated sections.

A heading that is only a date ("2025-09-10", "Time: 2025-09-10") is not an
entry: it dates the sections under it. Every other heading of the entry level
(the level just below the date headings, else the page's top level) opens an
entry that runs to the next heading of its level or above; a date heading with
no such heading under it (release notes written as a list under each date)
is itself the entry, titled with the page's heading and the date; the entry is the
page's URL with the heading's anchor, has the explicit identity
``url:page#anchor`` (a changelog's sections are told apart by their anchors
only) and carries its own HTML as its body - there is no other page to read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urldefrag

from lxml import etree
from lxml.html import HtmlElement

from tidings.errors import ParseError
from tidings.model import BodyState, ItemData
from tidings.readers.selectors import select_all
from tidings.readers.web.html import ParsedList, page_title, parse_document, read_date
from tidings.textutil import collapse_ws, shorten

_CONTENT = ("article .markdown", ".theme-doc-markdown", "article", "main", "body")
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_DATE_LABEL = re.compile(r"^(?:time|date|released?|updated?|时间|日期|发布)\s*[:：]?\s*", re.I)
_DATE_ONLY = re.compile(r"^[\d\s./\-年月日,:TZ+]+$"
                        r"|^[A-Za-z]{3,9}\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}$"
                        r"|^\d{1,2}(?:st|nd|rd|th)? [A-Za-z]{3,9}\.? \d{4}$")
_HASH_TEXT = re.compile(r"\s*(?:#|¶|Direct link to .*)$")


@dataclass(frozen=True, slots=True)
class _Heading:
    el: HtmlElement
    level: int
    text: str
    date: datetime | None  # set when the heading is only a date


def parse_changelog(text: str, url: str) -> ParsedList:
    """The sections of the changelog page ``text`` (ParseError when it has none)."""
    root = parse_document(text, url)
    content = _content(root)
    headings = [_heading(el) for el in content.iter(*_HEADINGS)]
    dates = [h for h in headings if h.date is not None]
    entries = [h for h in headings if h.date is None and h.el.get("id")]
    if dates:
        entries = [h for h in entries if h.level > min(d.level for d in dates)]
    page = urldefrag(url).url
    out = ParsedList(title=page_title(root))
    if not entries:
        out.items = [_entry(h, page, h.date, _prefix(headings)) for h in dates
                     if h.el.get("id")]
        if not out.items:
            raise ParseError(f"{url}: changelog: no section heading with an id "
                             f"({len(headings)} headings, {len(dates)} of them dates)", url)
        return out
    level = min(h.level for h in entries)
    current: datetime | None = None
    for h in headings:
        if h.date is not None:
            current = h.date
        elif h.level == level and h.el.get("id"):
            out.items.append(_entry(h, page, current or read_date(h.text)))
    if not dates:
        out.warnings.append("changelog: no date-only heading; sections dated by their own "
                            "heading, if at all")
    return out


def _content(root: HtmlElement) -> HtmlElement:
    for selector in _CONTENT:
        found = select_all(root, selector)
        if found:
            return found[0]
    return root


def _heading(el: HtmlElement) -> _Heading:
    text = _HASH_TEXT.sub("", collapse_ws(el.text_content().replace("\u200b", "")))
    bare = _DATE_LABEL.sub("", text)
    date = read_date(bare) if bare and _DATE_ONLY.match(bare) else None
    return _Heading(el, _HEADINGS[el.tag], text, date)


def _prefix(headings: list[_Heading]) -> str:
    """The page's own heading, to title entries that are only a date."""
    first = next((h for h in headings if h.level == 1 and h.date is None), None)
    return f"{first.text}: " if first else ""


def _entry(h: _Heading, page: str, published: datetime | None,
           prefix: str = "") -> ItemData:
    anchor = h.el.get("id", "")
    url = f"{page}#{anchor}"
    parts: list[str] = []
    text: list[str] = []
    for sib in h.el.itersiblings():
        if not isinstance(sib.tag, str):
            continue
        if sib.tag in _HEADINGS and _HEADINGS[sib.tag] <= h.level:
            break
        parts.append(etree.tostring(sib, encoding="unicode", with_tail=False))
        text.append(collapse_ws(sib.text_content()))
    body = "".join(parts)
    return ItemData(title=prefix + h.text, url=url, key=f"url:{url}",
                    summary=shorten(" ".join(text)), body=body or None,
                    body_state=BodyState.OK if body else BodyState.PENDING,
                    published_at=published)
