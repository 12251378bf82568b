"""One RSS item or Atom entry from its lxml element, in one pass over its children.

Each child's tag is classified once per document vocabulary: the full tag name
(``{namespace}local``) maps to a small code in a dict, so reading a child costs
one dictionary look-up and a few integer comparisons instead of splitting the
name and comparing namespaces. Core elements count within the format's
namespaces (feeds mix "no namespace", RSS 1.0 and 0.90, Atom 0.3 and 1.0, and
undeclared prefixes after recovery); extension elements by their full name.
"""

from __future__ import annotations

from lxml import etree

from tidings.readers.rss.entry import EntryFields
from tidings.readers.rss.tags import (
    ATOM_CORE,
    CACHE_LIMIT,
    DUBLIN_CORE,
    NS_ATOM10,
    NS_CONTENT,
    NS_FEEDBURNER,
    NS_ITUNES,
    NS_MEDIA,
    NS_XHTML,
    RDF_ABOUT,
    RSS_CORE,
    atom_text,
    split,
    text_of,
)
from tidings.readers.rss.text import absolute_http

# codes, in the order of how often they occur
(TITLE, LINK, DESCRIPTION, PUBDATE, GUID, CONTENT, CATEGORY, DC_AUTHOR, DC_DATE, AUTHOR,
 COMMENTS, ENCLOSURE, DC_MODIFIED, DC_SUBJECT, MEDIA, ATOM_LINK, ATOM_UPDATED, ATOM_PUBLISHED,
 ITUNES_IMAGE, ITUNES_AUTHOR, XHTML_BODY, ORIG_LINK, ID, SUMMARY) = range(1, 25)
IGNORED = 0

_RSS_CORE_CODES = {
    "title": TITLE, "link": LINK, "description": DESCRIPTION, "pubDate": PUBDATE, "guid": GUID,
    "category": CATEGORY, "author": AUTHOR, "comments": COMMENTS, "enclosure": ENCLOSURE,
}
_ATOM_CORE_CODES = {
    "title": TITLE, "link": LINK, "id": ID, "summary": SUMMARY, "content": CONTENT,
    "published": PUBDATE, "issued": PUBDATE, "created": PUBDATE,
    "updated": DC_MODIFIED, "modified": DC_MODIFIED, "author": AUTHOR, "category": CATEGORY,
}
_DC_CODES = {
    "creator": DC_AUTHOR, "contributor": DC_AUTHOR, "date": DC_DATE, "created": DC_DATE,
    "issued": DC_DATE, "modified": DC_MODIFIED, "subject": DC_SUBJECT,
}
_RSS_CODES: dict[object, int] = {}
_ATOM_CODES: dict[object, int] = {}


def _extension_code(ns: str, name: str) -> int:
    if ns in DUBLIN_CORE:
        return _DC_CODES.get(name, IGNORED)
    if ns in NS_MEDIA:
        return MEDIA
    if ns == NS_FEEDBURNER:
        return ORIG_LINK if name == "origLink" else IGNORED
    return IGNORED


def _rss_code(tag: object) -> int:
    """The code of a child of an RSS item (0: not read)."""
    code = IGNORED
    if isinstance(tag, str):
        ns, name = split(tag)
        if ns in RSS_CORE:
            code = _RSS_CORE_CODES.get(name, IGNORED)
        elif ns == NS_CONTENT:
            code = CONTENT if name == "encoded" else IGNORED
        elif ns == NS_ATOM10:
            code = {"link": ATOM_LINK, "updated": ATOM_UPDATED,
                    "published": ATOM_PUBLISHED}.get(name, IGNORED)
        elif ns == NS_ITUNES:
            code = {"image": ITUNES_IMAGE, "author": ITUNES_AUTHOR}.get(name, IGNORED)
        elif ns == NS_XHTML:
            code = XHTML_BODY if name == "body" else IGNORED
        else:
            code = _extension_code(ns, name)
    if len(_RSS_CODES) < CACHE_LIMIT:
        _RSS_CODES[tag] = code
    return code


def _atom_code(tag: object) -> int:
    """The code of a child of an Atom entry (0: not read)."""
    code = IGNORED
    if isinstance(tag, str):
        ns, name = split(tag)
        code = (_ATOM_CORE_CODES.get(name, IGNORED) if ns in ATOM_CORE
                else _extension_code(ns, name))
    if len(_ATOM_CODES) < CACHE_LIMIT:
        _ATOM_CODES[tag] = code
    return code


def rss_item(item: etree._Element, base: str | None) -> EntryFields:
    f = EntryFields(base=base, guid=item.get(RDF_ABOUT))
    orig_link = None
    codes = _RSS_CODES
    for child in item:
        tag = child.tag
        code = codes.get(tag)
        if code is None:
            code = _rss_code(tag)
        if code == IGNORED:
            continue
        if code == TITLE:
            f.title = text_of(child) if len(child) else child.text or ""
        elif code == LINK:
            text = child.text
            if text and text.strip():
                f.link = text.strip()
            elif child.get("href"):
                f.link = child.get("href")
        elif code == DESCRIPTION:
            f.description = text_of(child) if len(child) else child.text or ""
        elif code == PUBDATE:
            f.published = child.text
        elif code == GUID:
            f.guid = (child.text or "").strip() or f.guid
            perma = child.get("isPermaLink")
            f.guid_is_link = perma is None or perma.strip().lower() != "false"
        elif code == CONTENT:
            f.content = text_of(child) if len(child) else child.text or ""
        elif code == CATEGORY:
            if child.text:
                f.categories.append(child.text)
        elif code == ORIG_LINK:
            if child.text:
                orig_link = child.text.strip()
        else:
            _rss_rare(f, child, code)
    if orig_link:
        f.link = orig_link
    return f


def _rss_rare(f: EntryFields, el: etree._Element, code: int) -> None:
    if code == AUTHOR:
        if not f.author:
            f.author = text_of(el)
    elif code == COMMENTS:
        f.comments = (el.text or "").strip() or None
    elif code == ENCLOSURE:
        if el.get("url"):
            f.enclosures.append({k: el.get(k, "") for k in ("url", "type", "length")})
    elif code == ATOM_LINK:
        if not f.link and el.get("rel", "alternate") == "alternate":
            f.link = el.get("href")
    elif code == ATOM_UPDATED:
        f.updated = el.text
    elif code == ATOM_PUBLISHED:
        if not f.published:
            f.published = el.text
    elif code == ITUNES_IMAGE:
        if el.get("href"):
            f.media.append((el.get("href", ""), ""))
    elif code == ITUNES_AUTHOR:
        if not f.author:
            f.author = el.text or ""
    elif code == XHTML_BODY:
        if not f.content:
            f.content = text_of(el)
    else:
        _shared(f, el, code)


def _shared(f: EntryFields, el: etree._Element, code: int) -> None:
    """Extension elements read alike in RSS and Atom (Dublin Core, Media RSS)."""
    if code == DC_AUTHOR:
        if not f.author:
            f.author = text_of(el)
    elif code == DC_DATE:
        if not f.published:
            f.published = el.text
    elif code == DC_MODIFIED:
        f.updated = el.text
    elif code == DC_SUBJECT:
        if el.text:
            f.categories.append(el.text)
    elif code == MEDIA:
        media(f, el, split(str(el.tag))[1])


def media(f: EntryFields, el: etree._Element, name: str) -> None:
    """Media RSS images: media:content, media:thumbnail, media:group."""
    if name == "group":
        for child in el:
            if isinstance(child.tag, str):
                media(f, child, split(child.tag)[1])
    elif name == "content" and el.get("url"):
        medium, mime = el.get("medium", ""), el.get("type", "")
        url = el.get("url", "")
        if medium == "image" or mime.startswith("image/") or (not medium and not mime):
            f.media.append((url, mime if medium != "image" else "image/*"))
        for child in el:
            if isinstance(child.tag, str) and split(child.tag)[1] == "thumbnail":
                media(f, child, "thumbnail")
    elif name == "thumbnail" and el.get("url"):
        f.media.append((el.get("url", ""), "image/*"))


def atom_entry(entry: etree._Element, base: str | None) -> EntryFields:
    f = EntryFields(base=base)
    codes = _ATOM_CODES
    for child in entry:
        tag = child.tag
        code = codes.get(tag)
        if code is None:
            code = _atom_code(tag)
        if code == IGNORED:
            continue
        if code == TITLE:
            f.title = atom_text(child)
        elif code == LINK:
            _atom_link(f, child)
        elif code == ID:
            f.guid = child.text
        elif code == SUMMARY:
            f.description = atom_text(child)
        elif code == CONTENT:
            f.content = atom_text(child)
            if not f.link and child.get("src"):
                f.link = child.get("src")
        elif code == PUBDATE:
            f.published = f.published or child.text
        elif code == AUTHOR:
            if not f.author:
                for part in child:
                    if isinstance(part.tag, str) and split(part.tag)[1] == "name":
                        f.author = part.text or ""
        elif code == CATEGORY:
            term = child.get("label") or child.get("term") or child.text
            if term:
                f.categories.append(term)
        elif code == ORIG_LINK:
            if child.text:
                f.link = child.text.strip()
        else:
            _shared(f, child, code)
    f.guid_is_link = absolute_http(f.guid)
    return f


def _atom_link(f: EntryFields, el: etree._Element) -> None:
    rel, href = el.get("rel", "alternate"), el.get("href")
    if not href:
        return
    if rel == "alternate":
        # the first alternate wins, but an HTML page beats a typed non-HTML one
        rank = 2 if el.get("type", "text/html") in ("text/html", "application/xhtml+xml") else 1
        if rank > f.link_rank:
            f.link, f.link_rank = href, rank
    elif rel == "enclosure":
        f.enclosures.append({"url": href, "type": el.get("type", ""),
                             "length": el.get("length", "")})
    elif rel == "replies" and not f.comments and el.get("type", "text/html") == "text/html":
        f.comments = href
