"""JSON Feed 1.0 and 1.1 (https://jsonfeed.org/version/1.1)."""

from __future__ import annotations

import html
from typing import Any

from tidings.readers.rss.entry import EntryFields
from tidings.readers.rss.text import absolute_http
from tidings.readers.rss.xmlfeed import FeedMeta, XmlFeed


def is_json_feed(doc: Any) -> bool:
    if not isinstance(doc, dict):
        return False
    version = doc.get("version")
    if isinstance(version, str) and "jsonfeed.org/version/" in version:
        return True
    return isinstance(doc.get("items"), list) and "title" in doc


def read_json_feed(doc: dict[str, Any], url: str) -> XmlFeed:
    version = str(doc.get("version", ""))
    fmt = "json1.1" if version.rstrip("/").endswith("1.1") else "json1.0"
    meta = FeedMeta(
        format=fmt,
        title=_str(doc.get("title")),
        link=_str(doc.get("home_page_url")) or None,
        language=_str(doc.get("language")).lower(),
        base=url,
    )
    for hub in doc.get("hubs") or ():
        if isinstance(hub, dict) and _str(hub.get("url")) and not meta.hub:
            meta.hub = _str(hub.get("url"))
    base = _str(doc.get("feed_url")) or url
    items = doc.get("items")
    entries = [_entry(item, base) for item in items if isinstance(item, dict)] if isinstance(
        items, list) else []
    return XmlFeed(meta, entries)


def _entry(item: dict[str, Any], base: str) -> EntryFields:
    f = EntryFields(base=base)
    f.guid = _str(item.get("id")) or None
    f.guid_is_link = absolute_http(f.guid)  # the link when "url" is missing
    f.link = _str(item.get("url")) or _str(item.get("external_url")) or None
    f.title = _str(item.get("title"))
    content_html = _str(item.get("content_html"))
    content_text = _str(item.get("content_text"))
    f.content = content_html or (html.escape(content_text, quote=False) if content_text else "")
    f.description = html.escape(_str(item.get("summary")), quote=False)
    f.published = _str(item.get("date_published")) or None
    f.updated = _str(item.get("date_modified")) or None
    f.author = _author(item)
    f.categories = [_str(t) for t in item.get("tags") or () if _str(t)]
    for key in ("image", "banner_image"):
        if _str(item.get(key)):
            f.media.append((_str(item.get(key)), "image/*"))
    for att in item.get("attachments") or ():
        if isinstance(att, dict) and _str(att.get("url")):
            f.enclosures.append({
                "url": _str(att.get("url")),
                "type": _str(att.get("mime_type")),
                "length": _str(att.get("size_in_bytes")),
            })
    return f


def _author(item: dict[str, Any]) -> str:
    authors = item.get("authors")
    if isinstance(authors, list) and authors and isinstance(authors[0], dict):
        return _str(authors[0].get("name"))
    author = item.get("author")
    return _str(author.get("name")) if isinstance(author, dict) else ""


def _str(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return ""
