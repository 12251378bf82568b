"""The JSON shapes of Miniflux's REST API v1 (users, categories, feeds, entries), as
Miniflux documents them and its clients parse them (see ``web/miniflux.py``).

Miniflux numbers feeds and categories; tidings gives each source and folder the same
stable number as in Fever (a hash of its id or name), and a source in no folder the
category "All", as every Miniflux feed has one. Entries keep their item ids. Text
leaves as ``web/textout.py`` says: the content is the sanitized body, else the
summary escaped; links only when http(s).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tidings.model import Item, Source
from tidings.web.fever import number
from tidings.web.textout import text_as_html, web_link

USER_ID = 1
#: the category of sources in no folder (Miniflux's default one is "All")
ALL = "All"


def category_id(folder: str | None) -> int:
    return number("\x00all") if not folder else number(folder)


def iso(when: datetime | None) -> str:
    when = when or datetime(1970, 1, 1, tzinfo=UTC)
    return when.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def category(folder: str | None) -> dict[str, Any]:
    return {"id": category_id(folder), "title": folder or ALL, "user_id": USER_ID,
            "hide_globally": False}


def feed(source: Source, base: str) -> dict[str, Any]:
    return {
        "id": number(source.id), "user_id": USER_ID, "feed_url": source.url,
        "site_url": web_link(source.site_url) or f"{base}/source/{source.id}",
        "title": source.title or source.id, "checked_at": iso(source.last_success_at),
        "parsing_error_count": 0, "parsing_error_message": "", "disabled": False,
        "category": category(source.folder), "icon": None,
    }


def entry(item: Item, source: Source | None, base: str) -> dict[str, Any]:
    """One entry, with its feed (Miniflux embeds it, and clients read it there)."""
    published = item.published_at or item.discovered_at
    return {
        "id": item.id, "user_id": USER_ID, "feed_id": number(item.source_id),
        "status": "read" if item.read else "unread", "hash": item.key or str(item.id),
        "title": item.title, "url": web_link(item.url) or "", "comments_url": "",
        "published_at": iso(published), "created_at": iso(item.discovered_at),
        "changed_at": iso(item.updated_at),
        "content": item.body or text_as_html(item.summary),
        "author": item.author, "share_code": "", "starred": item.starred,
        "reading_time": max(1, len((item.body or item.summary).split()) // 200),
        "enclosures": [], "tags": list(item.categories),
        "feed": feed(source, base) if source is not None else None,
    }


def me() -> dict[str, Any]:
    return {"id": USER_ID, "username": "admin", "is_admin": True, "theme": "system_serif",
            "language": "en_US", "timezone": "UTC", "entry_sorting_direction": "desc",
            "entries_per_page": 100, "last_login_at": iso(None)}
