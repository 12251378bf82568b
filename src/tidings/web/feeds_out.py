"""Feeds out (R-API-2): every stream as Atom and JSON Feed 1.1, and the page listing them.

``/feeds/all``, ``/feeds/source/ID``, ``/feeds/folder/NAME`` and
``/feeds/search/ID`` (saved searches, R-API-5), each ``.atom`` or ``.json``.
Pages of ``limit`` items go back in time with ``before`` (the ``next`` link).
Answers carry ``ETag`` and ``Last-Modified`` and honour ``If-None-Match`` (weak
tags too) / ``If-Modified-Since`` with 304; ``HEAD`` is answered. A configured
WebSub hub (``feeds_hub``) is named in each feed and in a ``Link`` header.
Isolated sources appear in no feed.

Who may read a feed: anyone in public mode; otherwise whoever could read the
reader (a session, a token, this machine on first run), or anyone holding the
feed's own secret ``key``, an HMAC of its path under a secret kept in the
archive, so a feed URL can be given to a feed reader without giving it a login,
and a leaked URL opens that one feed only.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, replace
from email.utils import format_datetime, parsedate_to_datetime
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, HTTPException, Query, Request
from starlette.responses import RedirectResponse, Response

from tidings.app import ItemQuery, Tidings
from tidings.app.paging import decode_cursor, encode_cursor
from tidings.errors import ConfigError, NotFoundError
from tidings.model import Item, Visibility
from tidings.web.context import form_with_csrf, render, require_admin, viewer, web_state
from tidings.web.feedwriter import (
    TIDINGS_NS,
    FeedMeta,
    StoryTag,
    atom,
    json_feed,
    story_atom,
    updated_of,
)

router = APIRouter(include_in_schema=False)
FEED_SECRET = "feeds"  # noqa: S105 - the name of the stored secret feed keys derive from
_TYPES = {"atom": "application/atom+xml; charset=utf-8",
          "json": "application/feed+json; charset=utf-8"}
Fmt = Annotated[str, Query(pattern="^(atom|json)$")]
Cursor = Annotated[str | None, Query(max_length=40)]
Limit = Annotated[int, Query(ge=1, le=200)]
Key = Annotated[str | None, Query(max_length=64)]


@dataclass(frozen=True, slots=True)
class Stream:
    """One feed: its path (what its key signs), its title and how to read its items."""

    path: str
    title: str
    home: str
    query: ItemQuery | None = None
    search: str | None = None


async def feed_secret(request: Request) -> str:
    cached: str | None = getattr(request.app.state, "feed_secret", None)
    if cached is None:
        users = web_state(request).tidings.users
        cached = await users.secret(FEED_SECRET, secrets.token_hex(32))
        request.app.state.feed_secret = cached
    return cached


def feed_key(secret: str, path: str) -> str:
    return hmac.new(secret.encode(), f"feed:{path}".encode(), hashlib.sha256).hexdigest()[:32]


async def _allowed(request: Request, stream: Stream, key: str | None) -> bool:
    if viewer(request).can_read:
        return True
    return bool(key) and hmac.compare_digest(feed_key(await feed_secret(request), stream.path),
                                             key or "")


def base_url(request: Request) -> str:
    public = web_state(request).tidings.settings.public_url.rstrip("/")
    return public or str(request.base_url).rstrip("/")


async def serve_stream(request: Request, stream: Stream, fmt: str, before: str | None,
                       limit: int, key: str | None) -> Response:
    if not await _allowed(request, stream, key):
        raise HTTPException(401, "this feed needs its key (see /feeds when logged in)")
    items = await _items(request, stream, before, limit)
    base = base_url(request)
    params = {"key": key} if key else {}
    more = None
    if len(items) == limit:
        more = f"{base}{stream.path}.{fmt}?" + urlencode(
            {**params, "before": encode_cursor(items[-1]), "limit": limit})
    self_url = f"{base}{stream.path}.{fmt}" + (f"?{urlencode(params)}" if params else "")
    hub = web_state(request).settings.feeds_hub or None
    meta = FeedMeta(id=f"{base}{stream.path}", title=stream.title, self_url=self_url,
                    home_url=base + stream.home, next_url=more, hub_url=hub)
    stories = story_tags(web_state(request).tidings, items)
    body = (atom(meta, items, entry_extra=story_atom(stories), nsmap={"tidings": TIDINGS_NS})
            if fmt == "atom" else json_feed(meta, items, stories))
    response = conditional(request, body, _TYPES[fmt], items)
    if hub:  # WebSub discovery by header too (the spec's first place to look)
        response.headers["Link"] = f'<{hub}>; rel="hub", <{self_url}>; rel="self"'
    return response


def story_tags(tid: Tidings, items: Sequence[Item]) -> dict[int, StoryTag]:
    """Each item's story and its heat, for the items placed in one."""
    clusters = tid.stories.of_items([i.id for i in items])
    stories = tid.stories.stories(sorted(set(clusters.values())))
    return {item: StoryTag(cluster, stories[cluster].heat if cluster in stories else 0.0)
            for item, cluster in clusters.items()}


async def _items(request: Request, stream: Stream, before: str | None,
                 limit: int) -> list[Item]:
    tid = web_state(request).tidings
    cursor = decode_cursor(before)
    if stream.search is not None:
        await tid.search.index_recent()
        hits = tid.search.find(stream.search, limit=limit, before=cursor)
        found = [tid.items.get(h.item.id) for h in hits]
        hidden = {s.id for s in tid.sources.all() if s.visibility is Visibility.ISOLATED}
        return [i for i in found if i.source_id not in hidden]
    assert stream.query is not None
    return tid.items.query(replace(stream.query, before=cursor, limit=limit, editorial_only=True))


def conditional(request: Request, body: bytes, media_type: str,
                items: Sequence[Item]) -> Response:
    """``body`` with its validators, or 304 when the client has it already."""
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    modified = updated_of(items).replace(microsecond=0)
    headers = {"ETag": etag, "Last-Modified": format_datetime(modified, usegmt=True),
               "Cache-Control": "no-cache"}
    match = request.headers.get("if-none-match")
    if match is not None:
        # the weak comparison of RFC 9110 13.1.2: W/"x" matches "x" (proxies weaken tags)
        given = {t.strip().removeprefix("W/") for t in match.split(",")}
        if etag in given or match.strip() == "*":
            return Response(status_code=304, headers=headers)
    elif since := request.headers.get("if-modified-since"):
        try:
            if modified <= parsedate_to_datetime(since):
                return Response(status_code=304, headers=headers)
        except (TypeError, ValueError):
            pass  # an unreadable date: answer in full
    return Response(body, media_type=media_type, headers=headers)


# ----------------------------------------------------------------- the feeds


@router.api_route("/feeds/all.{fmt}", methods=["GET", "HEAD"])
async def all_feed(request: Request, fmt: str, before: Cursor = None, limit: Limit = 50,
                   key: Key = None) -> Response:
    stream = Stream("/feeds/all", "tidings: everything", "/all", ItemQuery())
    return await serve_stream(request, stream, _fmt(fmt), before, limit, key)


@router.api_route("/feeds/source/{source_id}.{fmt}", methods=["GET", "HEAD"])
async def source_feed(request: Request, source_id: str, fmt: str, before: Cursor = None,
                      limit: Limit = 50, key: Key = None) -> Response:
    source = web_state(request).tidings.sources.get(source_id)
    if source.visibility is Visibility.ISOLATED:
        raise NotFoundError(f"no source {source_id!r}")
    stream = Stream(f"/feeds/source/{quote(source_id, safe='')}", source.title or source.id,
                    f"/source/{quote(source_id, safe='')}", ItemQuery(source_id=source_id))
    return await serve_stream(request, stream, _fmt(fmt), before, limit, key)


@router.api_route("/feeds/folder/{name}.{fmt}", methods=["GET", "HEAD"])
async def folder_feed(request: Request, name: str, fmt: str, before: Cursor = None,
                      limit: Limit = 50, key: Key = None) -> Response:
    tid = web_state(request).tidings
    if name not in tid.folders.names():
        raise NotFoundError(f"no folder {name!r}")
    ids = tuple(s.id for s in tid.sources.all()
                if s.folder == name and s.visibility is Visibility.EDITORIAL)
    stream = Stream(f"/feeds/folder/{quote(name, safe='')}", f"tidings: {name}", "/all",
                    ItemQuery(source_ids=ids))
    return await serve_stream(request, stream, _fmt(fmt), before, limit, key)


@router.api_route("/feeds/search/{search_id}.{fmt}", methods=["GET", "HEAD"])
async def search_feed(request: Request, search_id: int, fmt: str, before: Cursor = None,
                      limit: Limit = 50, key: Key = None) -> Response:
    saved = web_state(request).tidings.compat.saved_search(search_id)
    stream = Stream(f"/feeds/search/{saved.id}", f"tidings: {saved.name}",
                    "/search?" + urlencode({"q": saved.query}), search=saved.query)
    return await serve_stream(request, stream, _fmt(fmt), before, limit, key)


def _fmt(fmt: str) -> str:
    if fmt not in _TYPES:
        raise NotFoundError("feeds are .atom or .json")
    return fmt


# ----------------------------------------------------------------- the page


@router.get("/feeds")
async def feeds_page(request: Request) -> Response:
    require_admin(request)
    return render(request, "feeds.html", await _context(request))


async def _context(request: Request, **extra: Any) -> dict[str, Any]:
    tid = web_state(request).tidings
    secret = await feed_secret(request)
    private = web_state(request).mode == "private"

    def url(path: str, fmt: str) -> str:
        return f"{path}.{fmt}" + (f"?key={feed_key(secret, path)}" if private else "")

    rows = [("Everything", "/feeds/all")]
    rows += [(f"Folder: {f}", f"/feeds/folder/{quote(f, safe='')}") for f in tid.folders.names()]
    rows += [(s.title or s.id, f"/feeds/source/{quote(s.id, safe='')}") for s in tid.sources.all()
             if s.visibility is Visibility.EDITORIAL]
    searches = [(s, url(f"/feeds/search/{s.id}", "atom"), url(f"/feeds/search/{s.id}", "json"))
                for s in tid.compat.saved_searches()]
    return {"title": "Feeds", "private": private, "searches": searches, "error": "",
            "feeds": [(name, url(path, "atom"), url(path, "json")) for name, path in rows],
            **extra}


@router.post("/feeds/searches")
async def save_search(request: Request) -> Response:
    require_admin(request)
    form = await form_with_csrf(request)
    try:
        await web_state(request).tidings.compat.save_search(str(form.get("name") or ""),
                                                            str(form.get("query") or ""))
    except ConfigError as exc:
        return render(request, "feeds.html", await _context(request, error=str(exc)), status=400)
    return RedirectResponse("/feeds", status_code=303)


@router.post("/feeds/searches/{search_id}/delete")
async def delete_search(request: Request, search_id: int) -> Response:
    require_admin(request)
    await form_with_csrf(request)
    await web_state(request).tidings.compat.delete_search(search_id)
    return RedirectResponse("/feeds", status_code=303)
