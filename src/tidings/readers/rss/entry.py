"""Turning the fields one entry carries into an :class:`ItemData`.

Every format parser (XML, JSON Feed, the feedparser fallback) collects the same
loose :class:`EntryFields` and hands them here, so teaser detection, summaries,
dates and image rules are decided in exactly one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tidings.model import BodyState, ItemData
from tidings.readers.rss.dates import parse_date
from tidings.readers.rss.text import (
    TEASER_MAX_CHARS,
    body_images,
    clean_title,
    is_teaser,
    looks_like_image,
    resolve,
    surely_longer,
    text_prefix,
    unique_images,
)
from tidings.textutil import SUMMARY_MAX_CHARS, shorten


@dataclass(slots=True)
class EntryFields:
    """What a format parser found in one entry, before any interpretation."""

    base: str | None = None  # xml:base in effect, else the feed URL
    title: str = ""
    link: str | None = None
    link_rank: int = 0  # Atom: how good the chosen alternate link is
    guid: str | None = None
    # the guid can stand for a missing link: RSS <guid> unless isPermaLink="false"
    # (relative ones resolved), an Atom or JSON Feed id that is an absolute http(s) URL
    guid_is_link: bool = False
    description: str = ""  # RSS description / Atom summary (HTML or text)
    content: str = ""  # content:encoded / Atom content / content_html (HTML)
    published: str | None = None
    updated: str | None = None
    author: str = ""
    categories: list[str] = field(default_factory=list)
    media: list[tuple[str, str]] = field(default_factory=list)  # (url, mime) images
    enclosures: list[dict[str, str]] = field(default_factory=list)
    comments: str | None = None


def build_item(f: EntryFields, *, cst_china: bool) -> ItemData:
    base = f.base
    url = resolve(base, f.link)
    if url is None and f.guid_is_link:
        url = resolve(base, f.guid)
    body, body_state, summary = _body_and_summary(f.content, f.description)
    published_raw = (f.published or f.updated or "").strip() or None
    published_at = parse_date(published_raw, cst_china=cst_china)
    updated_raw = (f.updated or "").strip() or None
    updated_at = (published_at if updated_raw == published_raw
                  else parse_date(updated_raw, cst_china=cst_china))
    images: list[str | None] = [resolve(base, u) for u, _mime in f.media] if f.media else []
    if f.enclosures:
        images += [resolve(base, e.get("url")) for e in f.enclosures
                   if looks_like_image(e.get("url", ""), e.get("type", ""))]
    if body:
        images += body_images(body, base)
    elif f.description:
        images += body_images(f.description, base)
    raw: dict[str, Any] = {}
    if f.comments:
        raw["comments"] = resolve(base, f.comments) or f.comments
    if f.enclosures:
        raw["enclosures"] = [
            {**e, "url": resolve(base, e.get("url")) or e.get("url", "")} for e in f.enclosures
        ]
    return ItemData(
        title=clean_title(f.title),
        url=url,
        guid=(f.guid or "").strip() or None,
        summary=summary,
        body=body,
        body_state=body_state,
        published_at=published_at,
        published_raw=published_raw,
        updated_at=updated_at,
        author=clean_title(f.author) if f.author else "",
        categories=_categories(f.categories) if f.categories else (),
        images=unique_images([i for i in images if i]) if images else (),
        raw=raw,
    )


def _categories(raw: list[str]) -> tuple[str, ...]:
    """Plain, distinct, non-empty category names in order."""
    seen: dict[str, None] = {}
    for category in raw:
        name = clean_title(category)
        if name:
            seen[name] = None
    return tuple(seen)


def _body_and_summary(content: str, description: str) -> tuple[str | None, BodyState, str]:
    """R-RSS-2: the fullest text is the body unless it is only a teaser."""
    content = content.strip()
    description = description.strip()
    candidate = content or description
    if not candidate:
        return None, BodyState.PENDING, ""
    if surely_longer(candidate, TEASER_MAX_CHARS):
        # the common full-text feed: too long to be a teaser, only the summary is needed
        source = description if content and description else candidate
        return candidate, BodyState.OK, shorten(text_prefix(source, SUMMARY_MAX_CHARS))
    candidate_text = text_prefix(candidate, TEASER_MAX_CHARS)
    summary_text = (
        text_prefix(description, SUMMARY_MAX_CHARS) if content and description else candidate_text
    )
    summary = shorten(summary_text or candidate_text)
    if not candidate_text:
        # an image-only post (comics, photos) is complete; an empty one is not
        if "<img" in candidate.lower():
            return candidate, BodyState.OK, summary
        return None, BodyState.PENDING, summary
    if is_teaser(candidate_text):
        return None, BodyState.PENDING, summary
    return candidate, BodyState.OK, summary
