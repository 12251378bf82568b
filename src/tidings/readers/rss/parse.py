"""``parse_feed``: bytes in, a :class:`ParsedFeed` out, no I/O.

The ladder, cheapest first (measured in benchmarks/parse.py):

1. a strict lxml parse of the bytes as they came (nearly every real feed);
2. the same after :mod:`repair` (encoding, entities, ampersands, control chars);
3. lxml in recovery mode on the repaired bytes;
4. feedparser, when recovery found no feed or no entries (tag soup).

Documents that are not feeds at all (an HTML error page, an empty body, some
other XML or JSON) raise :class:`ParseError` with a one-line reason.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from lxml import etree

from tidings.errors import ParseError
from tidings.model import ItemData
from tidings.net.charset import codec_for
from tidings.readers.rss.cdata import lift, restore
from tidings.readers.rss.entry import build_item
from tidings.readers.rss.fallback import read_with_feedparser
from tidings.readers.rss.jsonfeed import is_json_feed, read_json_feed
from tidings.readers.rss.repair import (
    declared_encoding,
    decode,
    repair,
    valid_charrefs,
    wrap_markup,
)
from tidings.readers.rss.text import clean_title, has_cjk_date, resolve
from tidings.readers.rss.xmlfeed import XmlFeed, feed_format, read_tree

_XHTML = "http://www.w3.org/1999/xhtml"
_PARSERS = threading.local()  # lxml parsers must not be shared between threads
_HTML_START = re.compile(rb"^\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html)\b",
                         re.IGNORECASE | re.DOTALL)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_LIFT_MIN_DOC = 8192  # bytes; below this lifting CDATA saves less than it costs
_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9._\-]+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ParsedFeed:
    """What one feed document said."""

    format: str  # rss2.0, rss0.91, rss1.0, rss0.90, atom1.0, atom0.3, json1.0, json1.1
    title: str
    site_url: str | None
    items: tuple[ItemData, ...]
    ttl: int | None = None  # minutes (<ttl> or sy:updatePeriod)
    hub: str | None = None  # WebSub hub named by the feed
    language: str = ""
    warnings: tuple[str, ...] = ()


def parse_feed(
    content: bytes,
    *,
    url: str,
    content_type: str = "",
    headers: Mapping[str, str] | None = None,
) -> ParsedFeed:
    """Parse a feed document of any supported format; raise ParseError if it is none."""
    if not content_type and headers:
        content_type = headers.get("content-type", "") or headers.get("Content-Type", "")
    match = _CHARSET.search(content_type)
    header_charset = match.group(1) if match else None
    head = content[:4].lstrip(b"\xef\xbb\xbf \t\r\n")[:1] or content.lstrip()[:1]
    if not content.strip():
        raise ParseError(f"{url}: not a feed: empty body", url)
    if head in (b"{", b"["):
        feed, warnings = _parse_json(content, url), list[str]()
    else:
        feed, warnings = _parse_xml(content, url, header_charset)
    return _finish(feed, url, warnings)


def _finish(feed: XmlFeed, url: str, warnings: list[str]) -> ParsedFeed:
    meta = feed.meta
    lang = meta.language
    cst_china = lang.startswith("zh")
    items = []
    for entry in feed.entries:
        china = cst_china or has_cjk_date(entry.published)
        items.append(build_item(entry, cst_china=china))
    return ParsedFeed(
        format=meta.format,
        title=clean_title(meta.title),
        site_url=resolve(meta.base or url, meta.link),
        items=tuple(items),
        ttl=meta.ttl,
        hub=resolve(url, meta.hub),
        language=lang,
        warnings=tuple(warnings),
    )


def _parse_json(content: bytes, url: str) -> XmlFeed:
    text, _ = decode(content, "utf-8")
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"{url}: not a feed: invalid JSON ({exc})", url) from exc
    except RecursionError as exc:  # the C decoder stops at the interpreter's limit, cleanly
        raise ParseError(f"{url}: not a feed: JSON nested too deeply", url) from exc
    if not is_json_feed(doc):
        raise ParseError(f"{url}: not a feed: JSON without a JSON Feed version", url)
    return read_json_feed(doc, url)


def _parse_xml(content: bytes, url: str, header_charset: str | None) -> tuple[XmlFeed, list[str]]:
    if _HTML_START.match(content[:4096]):
        raise ParseError(f"{url}: not a feed: {_html_reason(content, header_charset)}", url)
    data = _apply_header_charset(content, header_charset)
    root, sections = _lifted_or_none(data, url)
    if root is None:
        try:
            root = etree.fromstring(data, _parser(recover=False), base_url=url)
        except etree.XMLSyntaxError as exc:
            quick = _quick_fix(data, url, exc) if data is content else None
            if quick is not None:
                return quick
            return _parse_broken(content, url, header_charset, _first_error(exc))
    fmt = feed_format(root)
    if fmt is None:
        raise ParseError(f"{url}: not a feed: {_root_reason(root, content, header_charset)}", url)
    feed = read_tree(root, fmt, url=url, xml_base=b"xml:base" in data)
    if sections:
        for entry in feed.entries:
            entry.description = restore(entry.description, sections)
            entry.content = restore(entry.content, sections)
            entry.title = restore(entry.title, sections)
    return feed, []


def _lifted_or_none(data: bytes, url: str) -> tuple[etree._Element | None, list[str]]:
    """The tree of a UTF-8 document parsed with its CDATA bodies lifted (see cdata.py).

    (None, []) when nothing was lifted or the lifted document does not parse
    strictly; the caller then parses ``data`` itself, so errors stay libxml2's.
    """
    if len(data) < _LIFT_MIN_DOC or data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, []
    if declared_encoding(data) not in (None, "utf-8", "utf8"):
        return None, []
    lifted, sections = lift(data)
    root = _strict_or_none(lifted, url) if sections else None
    return (root, sections) if root is not None else (None, [])


def _quick_fix(
    data: bytes, url: str, exc: etree.XMLSyntaxError
) -> tuple[XmlFeed, list[str]] | None:
    """The two common faults that need no decoding: control characters, a tail.

    The full :func:`repair` decodes the document and runs its patterns over all
    of it, ten times a parse on a large feed. A document whose only fault is
    control characters (or something appended after the root element) parses
    strictly once those bytes are gone; anything else returns None and takes the
    full ladder. Only for byte-compatible encodings: a NUL-free ASCII superset.
    """
    error = _first_error(exc)
    root, fixed, warning = None, b"", list[str]()
    if "invalid Char value" in error and _ascii_superset(data):
        fixed = _CONTROL_BYTES.sub(b"", data)
        warning = ["control characters removed"]
        root = _strict_or_none(fixed, url)
    elif "Extra content at the end" in error and exc.lineno:
        line, column = exc.position  # 1-based, like the message
        for fixed in _cuts(data, line, column):
            root = _strict_or_none(fixed, url)
            if root is not None:
                break
    fmt = feed_format(root) if root is not None else None
    if root is None or fmt is None:
        return None
    feed = read_tree(root, fmt, url=url, xml_base=b"xml:base" in fixed)
    if not feed.entries:
        return None
    return feed, [f"not well-formed XML ({error})", *warning]


def _cuts(data: bytes, lineno: int, column: int) -> list[bytes]:
    """``data`` before the extra content at ``lineno``:``column`` (1-based), then before its line.

    libxml2 counts columns in characters, so the first cut is only right on an
    ASCII line; a wrong cut does not parse and the next one is tried. Lines are
    counted from the end: what follows a feed is short, the feed is not.
    """
    back = data.count(b"\n") - lineno + 2  # newlines from the end to the one ending line-1
    if not 0 < back <= 10_000:
        return []
    start = len(data)
    for _ in range(back):
        start = data.rfind(b"\n", 0, start)
    start += 1
    at = start + column - 1
    return [data[:at], data[:start]] if start < at < len(data) else [data[:start]]


def _ascii_superset(data: bytes) -> bool:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data[:64]:
        return False
    return declared_encoding(data) in (None, "utf-8", "utf8")


def _parse_broken(
    content: bytes, url: str, header_charset: str | None, error: str
) -> tuple[XmlFeed, list[str]]:
    """Steps 2-4 of the ladder, for a document that is not well-formed XML."""
    content = valid_charrefs(content)
    if "Extra content at the end" in error:
        # the feed itself is fine; something was appended after its end
        fixed, warnings = content, list[str]()
        root = _recover_or_none(content, url)
    else:
        fixed, warnings = repair(content, header_charset)
        root = _strict_or_none(fixed, url)
        if root is None:
            wrapped = wrap_markup(fixed)
            if wrapped != fixed:
                fixed = wrapped
                warnings.append("unescaped HTML inside text elements read as HTML")
                root = _strict_or_none(fixed, url)
        if root is None:
            root = _recover_or_none(fixed, url)
            if root is not None:
                warnings.append("parsed in recovery mode")
    warnings.insert(0, f"not well-formed XML ({error})")
    fmt = feed_format(root) if root is not None else None
    if root is not None and fmt is None and root.tag in ("html", f"{{{_XHTML}}}html"):
        raise ParseError(f"{url}: not a feed: {_html_reason(content, header_charset)}", url)
    feed = None
    if root is not None and fmt is not None:
        feed = read_tree(root, fmt, url=url, xml_base=b"xml:base" in fixed)
    if feed is None or not feed.entries:
        loose, reason = read_with_feedparser(content, url)
        if feed is None or len(loose.entries) > len(feed.entries):
            if not loose.entries and not loose.meta.title:
                raise ParseError(f"{url}: not a feed: {_garbage_reason(root, content)}", url)
            warnings.append(f"parsed by the feedparser fallback ({reason or 'no entries'})")
            feed = loose
    return feed, warnings


def _strict_or_none(data: bytes, url: str) -> etree._Element | None:
    try:
        return etree.fromstring(data, _parser(recover=False), base_url=url)
    except etree.XMLSyntaxError:
        return None


def _recover_or_none(data: bytes, url: str) -> etree._Element | None:
    try:
        return etree.fromstring(data, _parser(recover=True), base_url=url)
    except etree.XMLSyntaxError:  # even recovery needs one element
        return None


def _parser(*, recover: bool) -> etree.XMLParser:
    """This thread's parser; entities are never resolved and nothing is loaded (XXE)."""
    name = "recover" if recover else "strict"
    parser: etree.XMLParser | None = getattr(_PARSERS, name, None)
    if parser is None:
        parser = etree.XMLParser(
            resolve_entities=False, no_network=True, load_dtd=False, recover=recover,
            remove_comments=True, remove_pis=True, collect_ids=False,
        )
        setattr(_PARSERS, name, parser)
    return parser


def _apply_header_charset(content: bytes, header_charset: str | None) -> bytes:
    """A header charset counts only when the document itself names none (no BOM, no decl)."""
    codec = codec_for(header_charset)
    if codec in (None, "utf-8") or content[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return content
    if content.startswith(b"\xef\xbb\xbf") or declared_encoding(content):
        return content
    try:
        return content.decode(codec or "utf-8").encode("utf-8")
    except UnicodeDecodeError:
        return content


def _first_error(exc: etree.XMLSyntaxError) -> str:
    msg = str(exc.msg if getattr(exc, "msg", None) else exc).splitlines()[0]
    return f"line {exc.lineno}: {msg}" if getattr(exc, "lineno", None) else msg


def _html_reason(content: bytes, header_charset: str | None) -> str:
    text, _ = decode(content[:65536], header_charset)
    m = _HTML_TITLE.search(text)
    title = clean_title(m.group(1))[:80] if m else ""
    return f"got an HTML page (<title>{title}</title>)" if title else "got an HTML page"


def _root_reason(root: etree._Element, content: bytes, header_charset: str | None) -> str:
    tag = root.tag if isinstance(root.tag, str) else "?"
    if tag.rpartition("}")[2].lower() == "html":
        return _html_reason(content, header_charset)
    return f"XML root element <{tag}> is not rss, RDF or feed"


def _garbage_reason(root: etree._Element | None, content: bytes) -> str:
    if root is not None and isinstance(root.tag, str):
        return f"XML root element <{root.tag}> is not rss, RDF or feed"
    start = content.lstrip()[:40].decode("utf-8", "replace")
    return f"neither XML nor JSON (starts with {start!r})"
