"""``html`` mode (R-WEB-1): a list page read by the source's CSS selectors.

Pure: the page's text in, entries out. Every rule the source declares must
find something: an ``item`` selector that matches nothing, items of which none
has a link, a ``title``/``date``/``summary`` selector that matches in no item,
dates of which none can be read - each fails the run with a one-line reason
naming the rule, because a rule that silently matches nothing is worse than no
rule (the page changed, and nobody would know). Without an ``item`` selector
every link of the page is a candidate, minus the page's chrome (links inside
``nav``, ``footer`` and cookie banners) and the navigation filter's URL shapes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache

import lxml.html
from lxml import etree
from lxml.html import HtmlElement

from tidings.errors import ParseError
from tidings.model import BodyState, ItemData
from tidings.readers.rss.dates import parse_date
from tidings.readers.selectors import select_all
from tidings.readers.web.config import WebListConfig
from tidings.readers.web.links import absolute, is_navigation, link_title, other_site, page_base
from tidings.textutil import collapse_ws, shorten

_DEFAULT_LINK = "a[href]"
_CHROME = ("nav", "footer")
_BANNER_WORDS = ("cookie", "consent", "gdpr")
_BLOCKS = frozenset({
    "p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "br", "tr", "table",
    "section", "article", "header", "footer", "nav", "main", "aside", "blockquote", "pre",
    "dl", "dt", "dd", "figure", "hr", "form",
})  # fmt: skip
# A date inside prose ("Published on March 5, 2025 · 4 min read").
DATE_IN_TEXT = re.compile(
    r"\d{4}-\d{1,2}-\d{1,2}(?:[T ][\d:.]+(?:Z|[+-]\d\d:?\d\d)?)?"
    r"|\d{4}年\d{1,2}月\d{1,2}日"
    r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2},? \d{4}"
    r"|\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{4}",
    re.IGNORECASE,
)


_BASE_TAG = re.compile(r"<base\b", re.IGNORECASE)
_MDY = re.compile(r"(?P<m>[A-Za-z]{3,9})\.? (?P<d>\d{1,2})(?:st|nd|rd|th)?,? (?P<y>\d{4})$")
_DMY = re.compile(r"(?P<d>\d{1,2})(?:st|nd|rd|th)? (?P<m>[A-Za-z]{3,9})\.?,? (?P<y>\d{4})$")
_MONTHS = {m: n for n, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}


@dataclass(slots=True)
class ParsedList:
    items: list[ItemData] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    title: str = ""


def parse_document(text: str, url: str) -> HtmlElement:
    try:
        return lxml.html.document_fromstring(text or "<html></html>")
    except (etree.ParserError, ValueError) as exc:
        raise ParseError(f"{url}: not an HTML page ({exc})", url) from None


def page_title(root: HtmlElement) -> str:
    for el in root.iter("title"):
        return collapse_ws(el.text_content())
    return ""


def parse_html_list(text: str, url: str, config: WebListConfig) -> ParsedList:
    """The entries of the page ``text`` fetched from ``url`` (ParseError naming the rule
    that found nothing)."""
    root = parse_document(text, url)
    base = page_base(root, url) if _BASE_TAG.search(text) else url  # no walk without one
    out = ParsedList(title=page_title(root))
    if config.item:
        items = select_all(root, config.item)
        if not items:
            raise ParseError(f"{url}: item selector {config.item!r} matched nothing", url)
        _from_items(items, base, url, config, out)
    else:
        _from_links(root, base, url, config, out)
    return out


def _from_items(items: list[HtmlElement], base: str, url: str, config: WebListConfig,
                out: ParsedList) -> None:
    seen: set[str] = set()
    hits = {"title": 0, "date": 0, "summary": 0}
    dated = 0
    linked = 0
    for el in items:
        link = _item_link(el, config.link)
        href = absolute(link.get("href"), base) if link is not None else None
        if link is None or href is None:
            continue
        linked += 1
        if skipped(href, url, config) or href in seen:
            continue
        seen.add(href)
        title = _first_text(el, config.title) if config.title else ""
        hits["title"] += bool(title)
        title = title or link_title(link)
        raw_date, published = _item_date(el, config.date)
        hits["date"] += raw_date is not None
        dated += published is not None
        summary = _first_text(el, config.summary) if config.summary else ""
        hits["summary"] += bool(summary)
        if title:
            out.items.append(_item(title, href, summary, published, raw_date))
    link_rule = config.link or f"the item itself or {_DEFAULT_LINK}"
    if not linked:
        raise ParseError(f"{url}: link selector {link_rule!r} found no link in the "
                         f"{len(items)} items of {config.item!r}", url)
    for key in ("title", "date", "summary"):
        selector = getattr(config, key)
        if selector and not hits[key]:
            raise ParseError(f"{url}: {key} selector {selector!r} matched nothing in the "
                             f"{len(items)} items of {config.item!r}", url)
    if config.date and not dated:
        raise ParseError(f"{url}: date selector {config.date!r}: no date in a known format "
                         f"(first: {_first_raw(out)!r})", url)
    if config.date and dated < hits["date"]:
        out.warnings.append(f"{hits['date'] - dated} dates of {config.date!r} not understood")
    if not out.items:
        raise ParseError(f"{url}: {linked} items of {config.item!r} had links, but every one "
                         "was navigation, a repeat or had no title", url)


def skipped(href: str, page_url: str, config: WebListConfig) -> bool:
    """A link the config's filters leave out: navigation, another site."""
    return ((config.nav_filter and is_navigation(href, page_url))
            or (config.same_site and other_site(href, page_url)))


def _first_raw(out: ParsedList) -> str:
    for item in out.items:
        if item.published_raw:
            return item.published_raw[:60]
    return ""


def _item_link(el: HtmlElement, selector: str | None) -> HtmlElement | None:
    if selector:
        found = select_all(el, selector)
        return found[0] if found else None
    if el.tag == "a" and el.get("href"):
        return el
    for a in el.iter("a"):
        if a.get("href"):
            return a
    return None


def _first_text(el: HtmlElement, selector: str) -> str:
    for found in select_all(el, selector):
        text = collapse_ws(found.text_content()) or collapse_ws(found.get("title") or "")
        if text:
            return text
    return ""


def _item_date(el: HtmlElement, selector: str | None) -> tuple[str | None, datetime | None]:
    """(the raw text the selector found, the date read from it)."""
    if not selector:
        return None, None
    raw: str | None = None
    for found in select_all(el, selector):
        for attr in (found.get("datetime"), found.get("content"), found.text_content()):
            value = collapse_ws(attr or "")
            if not value:
                continue
            raw = raw or value
            when = read_date(value)
            if when is not None:
                return value, when
    return raw, None


def read_date(text: str) -> datetime | None:
    """A date in ``text``: the whole of it, else the first date-like part of it."""
    return read_date_cached(text) if len(text) <= _CACHED_DATE else _read_date(text)


def _read_date(text: str) -> datetime | None:
    when = _month_day_year(text)
    if when is not None:
        return when
    when = parse_date(text)
    if when is None:
        match = DATE_IN_TEXT.search(text)
        if match:
            when = parse_date(match.group(0))
    return when


# A list polled again shows the same dates; a date longer than this is prose, uncached.
_CACHED_DATE = 200
read_date_cached = lru_cache(maxsize=2048)(_read_date)


def _month_day_year(text: str) -> datetime | None:
    """"Sep 24, 2026", "24 September 2026", "September 24th, 2026": the list pages'
    usual day dates, read without the general parser (the hot path of a list page)."""
    match = _MDY.match(text) or _DMY.match(text)
    if match is None:
        return None
    month = _MONTHS.get(match.group("m")[:3].lower())
    if month is None:
        return None
    try:
        return datetime(int(match.group("y")), month, int(match.group("d")), tzinfo=UTC)
    except ValueError:
        return None


def _item(title: str, url: str, summary: str, published: datetime | None,
          raw_date: str | None) -> ItemData:
    return ItemData(title=title, url=url, summary=shorten(summary), published_at=published,
                    published_raw=raw_date, body=None, body_state=BodyState.PENDING)


def _from_links(root: HtmlElement, base: str, url: str, config: WebListConfig,
                out: ParsedList) -> None:
    selector = config.link or _DEFAULT_LINK
    links = select_all(root, selector)
    if not links:
        raise ParseError(f"{url}: link selector {selector!r} matched nothing", url)
    start = config.links_start_line
    lines = link_lines(root) if start else {}
    seen: set[str] = set()
    for link in links:
        if start and lines.get(link, 0) < start:
            continue
        if config.link is None and _in_chrome(link):
            continue
        href = absolute(link.get("href"), base)
        if href is None or href in seen or skipped(href, url, config):
            continue
        seen.add(href)
        title = link_title(link)
        if title:
            out.items.append(_item(title, href, "", None, None))
    if not out.items:
        after = f" after line {start}" if start else ""
        raise ParseError(f"{url}: link selector {selector!r} matched {len(links)} links, "
                         f"none of them an entry{after} (all navigation, chrome or "
                         "repeats)", url)


def _in_chrome(el: HtmlElement) -> bool:
    """Inside the page's navigation, footer, or a cookie banner."""
    for parent in el.iterancestors():
        if parent.tag in _CHROME or parent.get("role") in ("navigation", "dialog"):
            return True
        names = f"{parent.get('class', '')} {parent.get('id', '')}".lower()
        if any(word in names for word in _BANNER_WORDS):
            return True
    return False


def link_lines(root: HtmlElement) -> dict[HtmlElement, int]:
    """The line of body text (1-based, counting only lines with text) each link
    starts on, for ``links_start_line``."""
    body = root.find("body")
    lines: dict[HtmlElement, int] = {}
    state = _Lines()
    for event, el in etree.iterwalk(body if body is not None else root,
                                    events=("start", "end")):
        if not isinstance(el.tag, str):
            continue
        if el.tag in _BLOCKS:
            state.newline()
        if event == "start":
            if el.tag == "a":
                lines[el] = state.current()
            state.add(el.text)
        else:
            state.add(el.tail)
    return lines


class _Lines:
    """Counts lines of text as block elements open and close."""

    __slots__ = ("done", "pending")

    def __init__(self) -> None:
        self.done = 0  # lines with text so far
        self.pending = False  # the current line has text

    def newline(self) -> None:
        if self.pending:
            self.done += 1
            self.pending = False

    def add(self, text: str | None) -> None:
        if text and text.strip():
            self.pending = True

    def current(self) -> int:
        return self.done + 1
