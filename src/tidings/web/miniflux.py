"""Miniflux's REST API v1, the subset its clients use (issue 29), so newsboat's
``miniflux`` urls-source and the Miniflux mobile apps sync with tidings.

Log in with an API token: ``X-Auth-Token: <token>``, or HTTP Basic with user
``admin`` and the token as the password (what newsboat 2.21 sends). Served:
``/v1/me``, ``/v1/categories``, ``/v1/feeds`` (and one by id, its entries,
``/v1/feeds/counters``), ``/v1/entries`` (and one by id) with ``status``,
``starred``, ``limit``, ``offset``, ``order``, ``direction``,
``before_entry_id``/``after_entry_id``, ``before``/``after``, ``category_id``,
``feed_id`` and ``search`` (tidings' search syntax); ``PUT /v1/entries`` (status of many), ``PUT
/v1/entries/{id}/bookmark`` (toggle the star), and mark-all-as-read of a feed
and a category. Shapes in ``miniflux_shapes``. Isolated sources appear nowhere;
unknown entry ids in a status change are ignored, as Miniflux does; errors are
``{"error_message": …}`` as Miniflux clients read them, with ``detail`` beside.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace
from datetime import UTC, datetime
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response

from tidings.app import ApiToken, ItemQuery
from tidings.model import Source, Visibility
from tidings.web import auth
from tidings.web import miniflux_shapes as shapes
from tidings.web.context import web_state
from tidings.web.feeds_out import base_url
from tidings.web.fever import number

router = APIRouter(prefix="/v1", include_in_schema=False)
MAX_LIMIT = 1000
#: how far ``offset`` may go (offset paging reads the ids before the page)
MAX_OFFSET = 100_000
_ORDERS = {("id", "asc"): "id", ("id", "desc"): "id_desc",
           ("published_at", "asc"): "oldest", ("published_at", "desc"): "newest"}


class MinifluxError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_response(exc: MinifluxError) -> Response:
    return JSONResponse({"error_message": exc.message, "detail": exc.message},
                        status_code=exc.status)


def client(request: Request) -> ApiToken:
    """The API token of ``X-Auth-Token`` or of HTTP Basic (user admin)."""
    value = request.headers.get("x-auth-token", "")
    scheme, _, rest = request.headers.get("authorization", "").partition(" ")
    if not value and scheme.lower() == "basic":
        try:
            user, _, value = base64.b64decode(rest.strip()).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            user = ""
        value = value if user == "admin" else ""
    token = None
    if value and len(value) <= 200:
        token = web_state(request).tidings.tokens.find(auth.digest(value))
    if token is None:
        raise MinifluxError(401, "Access Unauthorized: an API token (X-Auth-Token, or "
                                 "Basic with user admin)")
    return token


Client = Annotated[ApiToken, Depends(client)]


def _visible(request: Request) -> dict[int, Source]:
    return {number(s.id): s for s in web_state(request).tidings.sources.all()
            if s.visibility is Visibility.EDITORIAL}


def _source(request: Request, feed_id: int) -> Source:
    found = _visible(request).get(feed_id)
    if found is None:
        raise MinifluxError(404, f"feed {feed_id} not found")
    return found


def _json(body: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


@router.get("/me")
async def me(request: Request, token: Client) -> Response:
    return _json(shapes.me())


@router.get("/categories")
async def categories(request: Request, token: Client) -> Response:
    folders = dict.fromkeys(s.folder for s in _visible(request).values())
    return _json([shapes.category(f) for f in folders])


@router.get("/feeds")
async def feeds(request: Request, token: Client) -> Response:
    base = base_url(request)
    return _json([shapes.feed(s, base) for s in _visible(request).values()])


@router.get("/feeds/counters")
async def counters(request: Request, token: Client) -> Response:
    visible = {s.id: n for n, s in _visible(request).items()}
    unread = {str(visible[c.source_id]): c.count
              for c in web_state(request).tidings.compat.unread_counts(True)
              if c.source_id in visible}
    return _json({"reads": {}, "unreads": unread})


@router.get("/feeds/{feed_id}")
async def one_feed(request: Request, token: Client, feed_id: int) -> Response:
    return _json(shapes.feed(_source(request, feed_id), base_url(request)))


@router.get("/categories/{category_id}/feeds")
async def category_feeds(request: Request, token: Client, category_id: int) -> Response:
    base = base_url(request)
    return _json([shapes.feed(s, base) for s in _visible(request).values()
                  if shapes.category_id(s.folder) == category_id])


#: no ``limit``: MAX_LIMIT, not Miniflux's 100; newsboat 2.21 sends none and never
#: pages, so 100 left every older unread entry of a feed behind
Limit = Annotated[int | None, Query(ge=0)]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]
Id = Annotated[int | None, Query(ge=0, le=2**63 - 1)]
Stamp = Annotated[int | None, Query(ge=0, le=10**11)]
Search = Annotated[str | None, Query(max_length=200)]


def _query(request: Request, *, feed_id: int | None, category_id: int | None,
           before_entry_id: int | None, after_entry_id: int | None,
           before: int | None, after: int | None, order: str,
           direction: str) -> ItemQuery:
    params = request.query_params
    statuses = set(params.getlist("status"))
    query = ItemQuery(editorial_only=True, order=_ORDERS.get(
        ("id" if order == "id" else "published_at", direction.lower()), "newest"),
        max_id=before_entry_id, min_id=after_entry_id)
    if statuses == {"unread"}:
        query = replace(query, unread_only=True)
    elif statuses == {"read"}:
        query = replace(query, read_only=True)
    if params.get("starred", "").lower() in ("true", "1"):
        query = replace(query, starred_only=True)
    if before is not None:
        query = replace(query, until=datetime.fromtimestamp(before, UTC))
    if after is not None:
        query = replace(query, since=datetime.fromtimestamp(after, UTC))
    visible = _visible(request)
    if feed_id is not None:
        query = replace(query, source_id=_source(request, feed_id).id)
    if category_id is not None:
        query = replace(query, source_ids=tuple(
            s.id for s in visible.values() if shapes.category_id(s.folder) == category_id))
    return query


async def _entries(request: Request, query: ItemQuery, limit: int | None,
                   offset: int) -> Response:
    """A page by ``offset`` and ``limit``: the ids up to the page's end are read (ids
    only, cheap), then the page's items; ``total`` counts every match (up to
    MAX_OFFSET + MAX_LIMIT)."""
    limit = min(limit or MAX_LIMIT, MAX_LIMIT)
    tid = web_state(request).tidings
    sources = {s.id: s for s in _visible(request).values()}
    base = base_url(request)

    def build() -> bytes:
        refs = tid.compat.item_refs(replace(query, limit=MAX_OFFSET + MAX_LIMIT))
        page = [item_id for item_id, _ in refs[offset:offset + limit]]
        items = {i.id: i for i in tid.items.query(ItemQuery(ids=tuple(page), limit=len(page)))}
        return orjson.dumps({"total": len(refs), "entries": [
            shapes.entry(items[i], sources.get(items[i].source_id), base)
            for i in page if i in items]})

    return Response(await run_in_threadpool(build), media_type="application/json")


@router.get("/entries")
async def entries(request: Request, token: Client, limit: Limit = None, offset: Offset = 0,
                  order: str = "published_at", direction: str = "desc",
                  before_entry_id: Id = None, after_entry_id: Id = None,
                  before: Stamp = None, after: Stamp = None, category_id: Id = None,
                  feed_id: Id = None, search: Search = None) -> Response:
    query = _query(request, feed_id=feed_id, category_id=category_id,
                   before_entry_id=before_entry_id, after_entry_id=after_entry_id,
                   before=before, after=after, order=order, direction=direction)
    if search:
        return await _found(request, query, search, limit)
    return await _entries(request, query, limit, offset)


async def _found(request: Request, query: ItemQuery, text: str, limit: int | None
                 ) -> Response:
    """``search``: tidings' own search (its syntax, newest first), then the other
    filters of the query on what it found."""
    tid = web_state(request).tidings
    await tid.search.index_recent()
    hits = tid.search.find(text, limit=min(limit or MAX_LIMIT, MAX_LIMIT))
    refs = {i for i, _ in tid.compat.item_refs(replace(query, ids=tuple(
        h.item.id for h in hits), limit=len(hits)))} if hits else set()
    sources = {s.id: s for s in _visible(request).values()}
    base = base_url(request)
    found = [tid.items.get(h.item.id) for h in hits if h.item.id in refs]
    return _json({"total": len(found), "entries": [
        shapes.entry(i, sources.get(i.source_id), base) for i in found]})


@router.get("/feeds/{feed_id}/entries")
async def feed_entries(request: Request, token: Client, feed_id: int, limit: Limit = None,
                       offset: Offset = 0, order: str = "published_at",
                       direction: str = "desc", before_entry_id: Id = None,
                       after_entry_id: Id = None) -> Response:
    query = _query(request, feed_id=feed_id, category_id=None,
                   before_entry_id=before_entry_id, after_entry_id=after_entry_id,
                   before=None, after=None, order=order, direction=direction)
    return await _entries(request, query, limit, offset)


@router.get("/categories/{category_id}/entries")
async def category_entries(request: Request, token: Client, category_id: int,
                           limit: Limit = None, offset: Offset = 0,
                           order: str = "published_at", direction: str = "desc") -> Response:
    query = _query(request, feed_id=None, category_id=category_id, before_entry_id=None,
                   after_entry_id=None, before=None, after=None, order=order,
                   direction=direction)
    return await _entries(request, query, limit, offset)


def _visible_ids(request: Request, ids: list[int]) -> list[int]:
    refs = web_state(request).tidings.compat.item_refs(
        ItemQuery(ids=tuple(ids), editorial_only=True, limit=len(ids)))
    return [item_id for item_id, _ in refs]


@router.get("/entries/{entry_id}")
async def one_entry(request: Request, token: Client, entry_id: int) -> Response:
    if not _visible_ids(request, [entry_id]):
        raise MinifluxError(404, f"entry {entry_id} not found")
    item = web_state(request).tidings.items.get(entry_id)
    sources = {s.id: s for s in _visible(request).values()}
    return _json(shapes.entry(item, sources.get(item.source_id), base_url(request)))


@router.put("/entries")
async def set_status(request: Request, token: Client) -> Response:
    """``{"entry_ids": [...], "status": "read"|"unread"}``; 204 as Miniflux answers."""
    try:
        body = orjson.loads(await request.body())
    except orjson.JSONDecodeError:
        raise MinifluxError(400, "the body is not JSON") from None
    ids, status = (body.get("entry_ids"), body.get("status")) if isinstance(body, dict) \
        else (None, None)
    if (not isinstance(ids, list) or not ids or len(ids) > 10_000
            or not all(isinstance(i, int) and 0 < i < 2**63 for i in ids)):
        raise MinifluxError(400, "entry_ids: a list of entry ids (at most 10,000)")
    if status not in ("read", "unread"):
        raise MinifluxError(400, "status: read or unread")
    known = _visible_ids(request, ids)
    if known:
        await web_state(request).tidings.items.mark_read(known, status == "read")
        web_state(request).changed()
    return Response(status_code=204)


@router.put("/entries/{entry_id}/bookmark")
async def toggle_bookmark(request: Request, token: Client, entry_id: int) -> Response:
    if not _visible_ids(request, [entry_id]):
        raise MinifluxError(404, f"entry {entry_id} not found")
    tid = web_state(request).tidings
    await tid.items.star([entry_id], not tid.items.get(entry_id).starred)
    web_state(request).changed()
    return Response(status_code=204)


@router.put("/feeds/{feed_id}/mark-all-as-read")
async def feed_read(request: Request, token: Client, feed_id: int) -> Response:
    source = _source(request, feed_id)
    await web_state(request).tidings.compat.set_read_where(
        ItemQuery(source_id=source.id, editorial_only=True), True)
    web_state(request).changed()
    return Response(status_code=204)


@router.put("/categories/{category_id}/mark-all-as-read")
async def category_read(request: Request, token: Client, category_id: int) -> Response:
    ids = tuple(s.id for s in _visible(request).values()
                if shapes.category_id(s.folder) == category_id)
    if not ids:
        raise MinifluxError(404, f"category {category_id} not found")
    await web_state(request).tidings.compat.set_read_where(
        ItemQuery(source_ids=ids, editorial_only=True), True)
    web_state(request).changed()
    return Response(status_code=204)
