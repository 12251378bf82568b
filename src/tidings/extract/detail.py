"""What an entry's own page says about it: title, date and summary (R-WEB-5).

Pure: a page's HTML in, the fields out. A selector, when the source gives one,
is asked first; without one (or when it finds nothing) the page's metadata
stands in - the date from meta tags, JSON-LD (``@graph`` included) and the first
``<time datetime>``, the title from the page's own, the summary from its
description - unless the source said its date selector is the only authority,
in which case no other timestamp on the page may stand in.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import lxml.html
from lxml.etree import ParserError

from tidings.extract.clean import select
from tidings.extract.metadata import extract_metadata, parse_date
from tidings.textutil import collapse_ws, shorten


@dataclass(frozen=True, slots=True)
class PageFields:
    title: str = ""
    published_at: datetime | None = None
    summary: str = ""


def read_detail(html: str, url: str, *, title_selector: str | None = None,
                date_selector: str | None = None, summary_selector: str | None = None,
                date_only_by_selector: bool = False) -> PageFields:
    """The fields ``html`` (the page at ``url``) gives; empty fields where it has none."""
    try:
        root = lxml.html.document_fromstring(html or "<html></html>")
    except (ParserError, ValueError):
        return PageFields()
    meta = extract_metadata(root, url)
    title = _text(root, title_selector) or meta.title or ""
    published = _date(root, date_selector)
    if published is None and not (date_selector and date_only_by_selector):
        published = meta.published_at
    summary = _text(root, summary_selector) or meta.description or ""
    return PageFields(title=title, published_at=published, summary=shorten(summary))


def _text(root: lxml.html.HtmlElement, selector: str | None) -> str:
    if not selector:
        return ""
    for el in select(root, selector):
        text = collapse_ws(el.text_content())
        if text:
            return text
    return ""


def _date(root: lxml.html.HtmlElement, selector: str | None) -> datetime | None:
    """The first matching element's date: its ``datetime`` or ``content`` attribute,
    else its text."""
    if not selector:
        return None
    for el in select(root, selector):
        for value in (el.get("datetime"), el.get("content"), el.text_content()):
            found = parse_date(value)
            if found is not None:
                return found
    return None

