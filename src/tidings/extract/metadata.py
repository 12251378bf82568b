"""Article metadata from a parsed page: title, author, date, language, lead image, description.

Sources are tried from the most deliberate to the most incidental: publisher
<meta> tags, then JSON-LD (including objects nested in ``@graph``), then the
visible markup (<time datetime>, <h1>, the first image).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dateutil import parser as dateparser
from lxml.html import HtmlElement

from tidings.dates import has_year, real_date, year_written
from tidings.identity.urls import resolve_url
from tidings.textutil import collapse_ws

_DATE_META = (
    "article:published_time", "og:published_time", "og:article:published_time",
    "datepublished", "pubdate", "publishdate", "publish-date", "published_time",
    "sailthru.date", "parsely-pub-date", "dc.date.issued", "dc.date", "dcterms.created",
    "date", "article.published",
)  # fmt: skip
_AUTHOR_META = ("author", "article:author", "dc.creator", "parsely-author", "sailthru.author")
_TITLE_META = ("og:title", "twitter:title")
_DESCRIPTION_META = ("og:description", "description", "twitter:description")
_IMAGE_META = ("og:image", "og:image:url", "og:image:secure_url", "twitter:image")
_ARTICLE_TYPES = ("article", "newsarticle", "blogposting", "reportagenewsarticle", "webpage")


@dataclass(frozen=True, slots=True)
class Metadata:
    title: str | None = None
    author: str | None = None
    published_at: datetime | None = None
    language: str | None = None
    lead_image: str | None = None
    description: str | None = None


def _meta_tags(root: HtmlElement) -> dict[str, str]:
    """First content of each <meta> keyed by lower-cased name/property/itemprop."""
    found: dict[str, str] = {}
    for el in root.iter("meta"):
        key = (
            el.get("property") or el.get("name") or el.get("itemprop") or el.get("http-equiv") or ""
        )
        value = el.get("content")
        if key and value and value.strip():
            found.setdefault(key.strip().lower(), value.strip())
    return found


def _jsonld_objects(root: HtmlElement) -> Iterator[dict[str, Any]]:
    for script in root.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        try:
            data = json.loads(script.text or "")
        except ValueError:
            continue
        yield from _flatten(data)


def _flatten(data: Any) -> Iterator[dict[str, Any]]:
    if isinstance(data, list):
        for entry in data:
            yield from _flatten(entry)
    elif isinstance(data, dict):
        yield data
        if "@graph" in data:
            yield from _flatten(data["@graph"])


def _is_article(obj: dict[str, Any]) -> bool:
    kinds = obj.get("@type", "")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    return any(str(k).lower() in _ARTICLE_TYPES or "article" in str(k).lower() for k in kinds)


def _name(value: Any) -> str | None:
    """A person's name from a JSON-LD author value (string, object or list)."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, dict):
        return _name(value.get("name"))
    if isinstance(value, list):
        names = [n for n in (_name(v) for v in value) if n]
        return ", ".join(names) or None
    return None


def _image_url(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, dict):
        return _image_url(value.get("url") or value.get("contentUrl"))
    if isinstance(value, list) and value:
        return _image_url(value[0])
    return None


def parse_date(value: str | None) -> datetime | None:
    """An aware UTC datetime from a date string; None when there is none (nothing,
    nothing readable, or no real date by the rule of :mod:`tidings.dates`).

    A date without a zone is taken as UTC: publishers that omit it mostly mean
    their server time, and a consistent rule beats a guess.
    """
    if not value or not (text := value.strip()):
        return None
    try:
        parsed: datetime | None = dateparser.isoparse(text)
    except (ValueError, OverflowError):
        parsed = _free_form_date(text)
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        return real_date(parsed.replace(tzinfo=UTC))
    try:
        return real_date(parsed.astimezone(UTC))
    except (ValueError, OverflowError):  # year 1 in a zone east of UTC is year 0 in UTC
        return None


def _free_form_date(text: str) -> datetime | None:
    """dateutil's reading of ``text``, unless it made the year up."""
    if not has_year(text):
        return None
    try:
        parsed = dateparser.parse(text)
    except (ValueError, OverflowError):
        return None
    return parsed if year_written(text, parsed) else None


def _first(*values: str | None) -> str | None:
    for value in values:
        if value and value.strip():
            return collapse_ws(value)
    return None


def _published(
    meta: dict[str, str], ld: list[dict[str, Any]], root: HtmlElement
) -> datetime | None:
    for key in _DATE_META:
        if (found := parse_date(meta.get(key))) is not None:
            return found
    for obj in ld:
        if (found := parse_date(_first(str(obj.get("datePublished") or "")))) is not None:
            return found
    for el in root.iter("time"):
        if (found := parse_date(el.get("datetime"))) is not None:
            return found
    return None


def extract_metadata(root: HtmlElement, url: str) -> Metadata:
    """Metadata of the page ``root`` (a full document tree), found at ``url``."""
    meta = _meta_tags(root)
    ld = [obj for obj in _jsonld_objects(root) if _is_article(obj)]
    h1 = next(root.iter("h1"), None)
    title_el = next(root.iter("title"), None)
    title = _first(
        *(meta.get(k) for k in _TITLE_META),
        *(str(obj.get("headline") or "") for obj in ld),
        h1.text_content() if h1 is not None else None,
        title_el.text_content() if title_el is not None else None,
    )
    author_meta = [v for k in _AUTHOR_META if (v := meta.get(k)) and "://" not in v]
    author_link = next((el.text_content() for el in root.iterfind(".//a[@rel='author']")), None)
    author = _first(*author_meta, *(_name(obj.get("author")) for obj in ld), author_link)
    language = _first(
        root.get("lang"),
        root.get("xml:lang"),
        meta.get("content-language"),
        meta.get("og:locale"),
    )
    image = _first(
        *(meta.get(k) for k in _IMAGE_META),
        *(_image_url(obj.get("image")) for obj in ld),
    )
    return Metadata(
        title=title,
        author=author,
        published_at=_published(meta, ld, root),
        language=language.replace("_", "-") if language else None,
        lead_image=resolve_url(url, image) if image else None,  # http(s) only
        description=_first(*(meta.get(k) for k in _DESCRIPTION_META)),
    )
