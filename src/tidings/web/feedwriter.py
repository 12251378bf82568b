"""Atom (RFC 4287) and JSON Feed 1.1 documents of a page of items (R-API-2).

Written with lxml's element tree rather than a feed-generation library: the same
writer also serves the Google Reader Atom dialect (``gr:`` attributes and
``tag:google.com`` ids, see ``web/greader.py``), which those libraries cannot
express, and a feed here is a dozen elements.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lxml import etree

from tidings.model import Item
from tidings.web.textout import web_link

ATOM = "http://www.w3.org/2005/Atom"
#: the namespace of tidings' own Atom elements (the story an entry belongs to): an
#: https URI of the project (the W3C validator refuses ``urn:tidings``, not a valid URN)
TIDINGS_NS = "https://github.com/tidings/tidings/blob/main/docs/api.md#atom-namespace"
JSONFEED_VERSION = "https://jsonfeed.org/version/1.1"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class StoryTag:
    """The story an item belongs to and its heat (R-DEDUP-12), carried by feeds out so
    a client can fold the same news from several sources as the reader does."""

    cluster_id: int
    heat: float


@dataclass(frozen=True, slots=True)
class FeedMeta:
    """What a feed says about itself."""

    id: str
    title: str
    self_url: str
    home_url: str
    next_url: str | None = None
    #: the WebSub hub that announces this feed's changes, when one is configured
    hub_url: str | None = None


def updated_of(items: Sequence[Item]) -> datetime:
    """The newest change among the items (the feed's ``updated``, ``Last-Modified``)."""
    return max((i.updated_at for i in items), default=_EPOCH)


def item_id(item: Item) -> str:
    return f"urn:tidings:item:{item.id}"


def entry_time(item: Item) -> datetime:
    """An entry's ``updated``: the item's own time (published, else when it arrived),
    not when tidings last rewrote its row, which is the collection time for nearly
    every item."""
    return item.published_at or item.discovered_at


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def atom(meta: FeedMeta, items: Sequence[Item],
         entry_extra: Callable[[etree._Element, Item], None] | None = None,
         nsmap: dict[str, str] | None = None,
         id_of: Callable[[Item], str] = item_id,
         feed_extra: Callable[[etree._Element], None] | None = None) -> bytes:
    """An Atom feed of ``items``; ``entry_extra`` and ``feed_extra`` add dialect
    elements to each entry and to the feed, ``id_of`` gives each entry's id."""
    namespaces: dict[str | None, str] = {None: ATOM}
    namespaces.update(nsmap or {})
    feed = etree.Element(f"{{{ATOM}}}feed", nsmap=namespaces)  # type: ignore[arg-type]
    _text(feed, "id", meta.id)
    _text(feed, "title", meta.title)
    newest = max([updated_of(items), *(entry_time(i) for i in items)])
    _text(feed, "updated", _iso(newest))
    _link(feed, "self", meta.self_url, "application/atom+xml")
    _link(feed, "alternate", meta.home_url, "text/html")
    if meta.next_url:
        _link(feed, "next", meta.next_url, "application/atom+xml")
    if meta.hub_url:
        etree.SubElement(feed, f"{{{ATOM}}}link", rel="hub", href=_clean(meta.hub_url))
    _text(feed, "generator", "tidings")
    if feed_extra is not None:
        feed_extra(feed)
    source_times: dict[str, datetime] = {}
    for item in items:
        when = entry_time(item)
        source_times[item.source_id] = max(when, source_times.get(item.source_id, when))
    for item in items:
        feed.append(_entry(item, entry_extra, id_of, meta, source_times[item.source_id]))
    return bytes(etree.tostring(feed, xml_declaration=True, encoding="utf-8"))


def _entry(item: Item, extra: Callable[[etree._Element, Item], None] | None,
           id_of: Callable[[Item], str], meta: FeedMeta, source_time: datetime
           ) -> etree._Element:
    entry = etree.Element(f"{{{ATOM}}}entry")
    _text(entry, "id", id_of(item))
    _text(entry, "title", item.title or "(untitled)", type="text")
    _text(entry, "updated", _iso(entry_time(item)))
    _text(entry, "published", _iso(item.published_at or item.discovered_at))
    if link := web_link(item.url):
        _link(entry, "alternate", link, "text/html")
    # every entry has an author (RFC 4287 4.1.2): the item's, else its source, else
    # the feed's own title
    author = etree.SubElement(entry, f"{{{ATOM}}}author")
    _text(author, "name", item.author or item.source_title or item.source_id or meta.title)
    for tag in item.categories:
        etree.SubElement(entry, f"{{{ATOM}}}category", term=_clean(tag))
    if item.summary:  # plain text (see web/textout.py): never labelled html
        _text(entry, "summary", item.summary, type="text")
    if item.body:
        _text(entry, "content", item.body, type="html")
    source = etree.SubElement(entry, f"{{{ATOM}}}source")
    _text(source, "id", f"urn:tidings:source:{item.source_id}")
    _text(source, "title", item.source_title or item.source_id)
    _text(source, "updated", _iso(source_time))  # its newest entry on this page
    if extra is not None:
        extra(entry, item)
    return entry


def _text(parent: etree._Element, name: str, value: str, type: str | None = None
          ) -> etree._Element:
    element = etree.SubElement(parent, f"{{{ATOM}}}{name}")
    if type is not None:
        element.set("type", type)
    element.text = _clean(value)
    return element


def _link(parent: etree._Element, rel: str, href: str, kind: str) -> None:
    etree.SubElement(parent, f"{{{ATOM}}}link", rel=rel, href=_clean(href), type=kind)


def _clean(text: str) -> str:
    """XML 1.0 cannot carry most control characters; stored text may hold them."""
    return "".join(c for c in text if c in "\t\n\r" or c >= " ").replace("\ufffe", "")\
        .replace("\uffff", "")


def story_atom(stories: Mapping[int, StoryTag]) -> Callable[[etree._Element, Item], None]:
    """An ``entry_extra`` that adds ``<tidings:story cluster=… heat=…/>`` to the entries
    of items placed in a story."""
    def extra(entry: etree._Element, item: Item) -> None:
        tag = stories.get(item.id)
        if tag is not None:
            etree.SubElement(entry, f"{{{TIDINGS_NS}}}story", cluster=str(tag.cluster_id),
                             heat=f"{tag.heat:.3f}")
    return extra


def json_feed(meta: FeedMeta, items: Sequence[Item],
              stories: Mapping[int, StoryTag] | None = None) -> bytes:
    """A JSON Feed 1.1 document of ``items``; ``stories`` adds each item's story to its
    ``_tidings`` extension object."""
    doc: dict[str, Any] = {"version": JSONFEED_VERSION, "title": meta.title,
                           "home_page_url": meta.home_url, "feed_url": meta.self_url,
                           "items": [_json_item(i, (stories or {}).get(i.id))
                                     for i in items]}
    if meta.next_url:
        doc["next_url"] = meta.next_url
    if meta.hub_url:
        doc["hubs"] = [{"type": "WebSub", "url": meta.hub_url}]
    return json.dumps(doc, ensure_ascii=False).encode()


def _json_item(item: Item, story: StoryTag | None = None) -> dict[str, Any]:
    ext: dict[str, Any] = {"source_id": item.source_id, "source_title": item.source_title,
                           "backfill": item.backfill}
    if story is not None:
        ext.update(cluster_id=story.cluster_id, heat=round(story.heat, 3))
    out: dict[str, Any] = {"id": str(item.id), "title": item.title,
                           "date_published": _iso(item.published_at or item.discovered_at),
                           "date_modified": _iso(item.updated_at), "_tidings": ext}
    if link := web_link(item.url):
        out["url"] = link
    if item.body:
        out["content_html"] = item.body
    else:
        out["content_text"] = item.summary or item.title
    if item.summary:
        out["summary"] = item.summary
    if item.author:
        out["authors"] = [{"name": item.author}]
    if item.categories:
        out["tags"] = list(item.categories)
    return out
