"""feedparser as the last resort for documents lxml cannot make sense of.

feedparser is about a hundred times slower than the lxml path, but its loose
SGML-based parser reads documents that are not XML at all (tag soup served as
RSS). It only runs when the lxml path, even in recovery mode, found no entries.
"""

from __future__ import annotations

from typing import Any

from tidings.readers.rss.entry import EntryFields
from tidings.readers.rss.repair import valid_charrefs
from tidings.readers.rss.xmlfeed import FeedMeta, XmlFeed

_FORMATS = {
    "rss090": "rss0.90", "rss091n": "rss0.91", "rss091u": "rss0.91", "rss092": "rss0.92",
    "rss093": "rss0.93", "rss094": "rss0.94", "rss20": "rss2.0", "rss10": "rss1.0",
    "rss": "rss", "atom01": "atom0.1", "atom02": "atom0.2", "atom03": "atom0.3",
    "atom10": "atom1.0", "atom": "atom",
}


def read_with_feedparser(content: bytes, url: str) -> tuple[XmlFeed, str]:
    """Parse with feedparser; returns the feed and feedparser's bozo reason ('' if none)."""
    import feedparser  # imported here: 40 ms of start-up, needed for a rare broken feed

    content = valid_charrefs(content)  # feedparser encodes &#xD800; as UTF-8, and fails
    try:
        parsed: Any = feedparser.parse(content, response_headers={"content-location": url})
    except Exception as exc:  # its own bugs on hostile input come in any type
        # e.g. ``<image></width>`` makes its width handler call int(None): the
        # document is then unreadable to both parsers, which the caller reports
        return XmlFeed(FeedMeta(format="rss", base=url), []), f"{type(exc).__name__} in feedparser"
    feed = parsed.get("feed", {})
    meta = FeedMeta(
        format=_FORMATS.get(parsed.get("version") or "", "rss"),
        title=feed.get("title", ""),
        link=feed.get("link"),
        language=(feed.get("language") or "").lower(),
        ttl=_int(feed.get("ttl")),
        base=url,
    )
    for link in feed.get("links", ()):
        if link.get("rel") == "hub" and not meta.hub:
            meta.hub = link.get("href")
    entries = [_entry(e, url) for e in parsed.get("entries", ())]
    reason = str(parsed.get("bozo_exception", "")) if parsed.get("bozo") else ""
    return XmlFeed(meta, entries), reason


def _entry(e: Any, url: str) -> EntryFields:
    f = EntryFields(base=url)
    # feedparser keeps a key whose value it could not read as None (a fuzzed
    # ``<description></content>`` gave a None summary): text fields are "" then
    f.title = e.get("title") or ""
    f.link = e.get("link")
    f.guid = e.get("id")
    f.guid_is_link = bool(e.get("guidislink"))
    f.description = e.get("summary") or ""
    contents = e.get("content") or ()
    if contents:
        f.content = contents[0].get("value") or ""
    f.published = e.get("published") or e.get("created")
    f.updated = e.get("updated")
    f.author = e.get("author") or ""
    f.categories = [t.get("term") for t in e.get("tags", ()) if t.get("term")]
    f.comments = e.get("comments")
    for m in list(e.get("media_content", ())) + list(e.get("media_thumbnail", ())):
        if m.get("url"):
            f.media.append((m["url"], m.get("type", "image/*") or "image/*"))
    for link in e.get("links", ()):
        if link.get("rel") == "enclosure" and link.get("href"):
            f.enclosures.append({"url": link["href"], "type": link.get("type", ""),
                                 "length": str(link.get("length", ""))})
    return f


def _int(text: Any) -> int | None:
    try:
        value = int(str(text).strip())
    except ValueError:
        return None
    return value if value > 0 else None
