"""``markdown`` mode (R-WEB-2): the links of a page as a rendering service returns it.

A Jina-compatible service answers ``GET {base}/{url}`` with the rendered page
as Markdown, optionally after a small header (``Title:``, ``URL Source:``,
``Markdown Content:``). Links are read from the Markdown: image links are not
entries, a card link (``[![img](…) Title](…)``) is read without its images,
and the navigation filter and ``links_start_line`` (counted in lines of the
Markdown content) apply as in ``html`` mode.
"""

from __future__ import annotations

import re
from datetime import datetime

from tidings.errors import ParseError
from tidings.model import BodyState, ItemData
from tidings.readers.web.config import WebListConfig
from tidings.readers.web.html import DATE_IN_TEXT, ParsedList, read_date, skipped
from tidings.readers.web.links import absolute
from tidings.textutil import collapse_ws

# [text](url "title"): text may hold one level of brackets (an image inside a card link)
_LINK = re.compile(
    r"(?<!!)\[((?:[^\[\]\n]|\[[^\[\]\n]*\](?:\([^)\n]*\))?)*)\]"
    r"\(\s*<?([^)\s>]+)>?(?:\s+\"([^\"\n]*)\")?\s*\)"
)
_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*|__([^_\n]+)__")
_EMPHASIS = re.compile(r"[*_`#]+")
_HEADER = re.compile(r"^(Title|URL Source|Published Time|Markdown Content):\s*(.*)$")


def split_header(text: str) -> tuple[dict[str, str], list[str]]:
    """The service's header fields and the lines of the Markdown content."""
    lines = text.splitlines()
    header: dict[str, str] = {}
    for n, line in enumerate(lines[:12]):
        match = _HEADER.match(line)
        if match and match.group(1) == "Markdown Content":
            return header, lines[n + 1:]
        if match:
            header[match.group(1)] = match.group(2).strip()
    return header, lines


def parse_markdown_list(text: str, url: str, config: WebListConfig) -> ParsedList:
    """The entries linked from the Markdown rendering ``text`` of the page ``url``."""
    header, lines = split_header(text)
    base = header.get("URL Source") or url
    out = ParsedList(title=header.get("Title", ""))
    seen: set[str] = set()
    found = 0
    start = config.links_start_line or 1
    line_no = 0
    for line in lines:
        if line.strip():
            line_no += 1
        for match in _LINK.finditer(line):
            found += 1
            href = absolute(match.group(2), base)
            if line_no < start or href is None or href in seen:
                continue
            if skipped(href, url, config):
                continue
            title = _title(match.group(1), match.group(3))
            if title:
                seen.add(href)
                out.items.append(ItemData(title=title, url=href, body=None,
                                          published_at=_card_date(match.group(1)),
                                          body_state=BodyState.PENDING))
    if not found:
        raise ParseError(f"{url}: the rendered Markdown has no links "
                         f"({len(lines)} lines; was the page rendered?)", url)
    if not out.items:
        raise ParseError(f"{url}: {found} links in the rendered Markdown, none of them an "
                         "entry (all navigation, images or repeats)", url)
    return out


def _card_date(text: str) -> datetime | None:
    """The date a card link shows ("Research September 12, 2026 **Title**")."""
    found = DATE_IN_TEXT.search(_IMAGE.sub(" ", text))
    return read_date(found.group(0)) if found else None


def _title(text: str, attr: str | None) -> str:
    """The link's title: a card's bold heading, else its text without images and
    emphasis; a ``"title"`` when the text is much longer than it."""
    bold = _BOLD.search(_IMAGE.sub(" ", text))
    heading = collapse_ws(bold.group(1) or bold.group(2)) if bold else ""
    if heading:
        return heading
    plain = collapse_ws(_EMPHASIS.sub("", _IMAGE.sub(" ", text)))
    attr = collapse_ws(attr or "")
    if attr and (not plain or len(plain) > 2 * len(attr)):
        return attr
    return plain
