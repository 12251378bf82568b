"""Reading pages: the lists, search, the article, and read/star forms (R-UI-1..4).

Handlers are ``async def`` calling the (synchronous, indexed, millisecond)
facade directly; the one call that may take long, search, runs on a worker
thread (``WebState.search``) so it never holds up the event loop that the
scheduler shares.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from starlette.responses import RedirectResponse, Response

from tidings.app import ItemQuery
from tidings.app.paging import decode_cursor, encode_cursor
from tidings.errors import ConfigError, NotFoundError
from tidings.model import BodyState, ItemBrief, Visibility
from tidings.web.context import (
    form_with_csrf,
    page_key,
    render,
    require_admin,
    require_reader,
    safe_next,
    viewer,
    web_state,
)
from tidings.web.edge import ItemId, parse_ids
from tidings.web.listing import DEFAULT_QUOTA, PAGE_SIZE, build_page
from tidings.web.sidebar import TODAY_HOURS, nav_context
from tidings.web.stories import story_of

router = APIRouter(include_in_schema=False)

_OPERATOR = re.compile(r"^-|^(author|source|date|before|after|since|until):", re.IGNORECASE)
_TOKEN = re.compile(r'(-?\w+:)?"([^"]*)"|(\S+)')


def search_terms(text: str) -> list[str]:
    """The words a search looks for, for highlighting (operators and negations left out)."""
    terms: list[str] = []
    for match in _TOKEN.finditer(text):
        prefix, phrase, word = match.group(1), match.group(2), match.group(3)
        if phrase is not None:
            if not prefix or prefix.lower() == "intitle:":
                terms.append(phrase)
            continue
        if word.lower().startswith("intitle:"):
            word = word[8:]
        elif _OPERATOR.match(word) or word.upper() in {"AND", "OR", "NOT"}:
            continue
        terms.append(word.strip("()"))
    return [t for t in terms if t]


def visible_filter(request: Request) -> Any:
    """Isolated sources are never shown to anyone but the admin."""
    who = require_reader(request)
    if who.admin:
        return lambda _item: True
    sources = web_state(request).sources()
    return lambda item: (s := sources.get(item.source_id)) is None or \
        s.visibility is Visibility.EDITORIAL


def list_page(request: Request, view: str, title: str, query: ItemQuery, *,
               quota: int | None = DEFAULT_QUOTA, extra: dict[str, Any] | None = None,
               fetch: Callable[[ItemQuery], list[ItemBrief]] | None = None) -> Response:
    who = require_reader(request)
    st = web_state(request)
    before = decode_cursor(request.query_params.get("before"))
    show = visible_filter(request)

    def context() -> dict[str, Any]:
        tid = st.tidings
        q = replace(query, before=before, editorial_only=not who.admin)
        page = build_page(fetch or tid.items.briefs, tid.items.reprints, q, quota=quota,
                          page_size=PAGE_SIZE, visible=show, stories=tid.stories.folds)
        return {"view": view, "title": title, "page": page, "stats": st.stats(),
                "sources": st.sources(), "paged": before is not None,
                **nav_context(request), **(extra or {})}

    return render(request, "list.html", context, cache_key=page_key(request, "list"))


@router.get("/")
async def today(request: Request) -> Response:
    since = datetime.now(UTC) - timedelta(hours=TODAY_HOURS)
    who = require_reader(request)
    newest = web_state(request).tidings.items.briefs(ItemQuery(limit=1,
                                                               editorial_only=not who.admin))
    # an empty Today explains itself: a first collection is mostly history (R-DEDUP-5)
    return list_page(request, "today", "Today",
                      ItemQuery(since=since, include_backfill=False),
                      extra={"newest": newest[0] if newest else None})


@router.get("/all")
async def all_items(request: Request) -> Response:
    return list_page(request, "all", "All", ItemQuery())


@router.get("/unread")
async def unread(request: Request) -> Response:
    return list_page(request, "unread", "Unread", ItemQuery(unread_only=True))


@router.get("/starred")
async def starred(request: Request) -> Response:
    return list_page(request, "starred", "Starred", ItemQuery(starred_only=True), quota=None)


@router.get("/source/{source_id}")
async def source_items(request: Request, source_id: str) -> Response:
    require_reader(request)
    source = web_state(request).source(source_id)
    if source is None or not (viewer(request).admin
                              or source.visibility is Visibility.EDITORIAL):
        raise NotFoundError(f"no source {source_id!r}")
    return list_page(request, "source", source.title or source.id,
                      ItemQuery(source_id=source_id), quota=None, extra={"source": source})


@router.get("/author")
async def author_items(request: Request, name: str = "") -> Response:
    name = name.strip()
    if not name or len(name) > 300:
        raise ConfigError("name an author: /author?name=...")
    return list_page(request, "author", name, ItemQuery(author=name), quota=None,
                      extra={"author": name})


@router.get("/review")
async def review(request: Request) -> Response:
    """Items whose body could not be extracted (R-EXTRACT-6), raw page one click away."""
    require_admin(request)
    tid = web_state(request).tidings
    # summary-only sources are unconfirmed on purpose: nobody tried, nothing to review
    return list_page(request, "review", "Extraction review",
                      ItemQuery(body_state=BodyState.UNCONFIRMED), quota=None,
                      fetch=lambda q: [i.brief() for i in tid.review.items(
                          limit=q.limit, before=q.before)])


@router.get("/search")
async def search(request: Request, q: str = "", ranked: bool = False) -> Response:
    require_reader(request)
    q = q.strip()
    if len(q) > 500:
        raise ConfigError("the search is too long (500 characters at most)")
    before = decode_cursor(request.query_params.get("before"))
    hits: list[Any] = []
    error = ""
    if q:
        try:
            hits = await web_state(request).search(q, ranked=ranked, limit=PAGE_SIZE,
                                                   before=before)
        except ConfigError as exc:
            error = str(exc)
    # the cursor comes from the page as the store returned it: hiding some hits
    # from a non-admin must not end the paging
    next_cursor = encode_cursor(hits[-1].item) if len(hits) >= PAGE_SIZE and not ranked \
        else None
    show = visible_filter(request)
    hits = [h for h in hits if show(h.item)]
    ctx = {"q": q, "ranked": ranked, "hits": hits, "terms": search_terms(q), "error": error,
           "next_cursor": next_cursor, "title": f"Search: {q}" if q else "Search",
           "stats": web_state(request).stats()}
    return render(request, "search.html", ctx, status=400 if error else 200)


@router.get("/item/{item_id}")
async def article(request: Request, item_id: ItemId, q: str = "") -> Response:
    require_reader(request)
    st = web_state(request)
    item = st.tidings.items.get(item_id)
    if not visible_filter(request)(item):
        raise NotFoundError(f"no item {item_id}")
    reprints = st.tidings.items.reprints([item.title_fp]).get(item.title_fp, []) \
        if item.title_fp else []
    ctx = {"item": item, "terms": search_terms(q[:500]), "q": q[:500],
           "source": st.source(item.source_id), "title": item.title or "(untitled)",
           "reprints": [r for r in reprints if r.id != item.id][:30],
           "story": story_of(st.tidings, item, visible_filter(request))}
    return render(request, "article.html", ctx)


@router.post("/item/{item_id}/state")
async def item_state(request: Request, item_id: ItemId) -> Response:
    """No-JavaScript read/star buttons of the article page."""
    require_admin(request)
    form = await form_with_csrf(request)
    tid = web_state(request).tidings
    tid.items.get(item_id)
    if form.get("read") in {"0", "1"}:
        await tid.items.mark_read([item_id], form["read"] == "1")
    if form.get("starred") in {"0", "1"}:
        await tid.items.star([item_id], form["starred"] == "1")
    web_state(request).changed()
    return RedirectResponse(safe_next(form.get("next"), f"/item/{item_id}"), status_code=303)


@router.post("/mark-read")
async def mark_read(request: Request) -> Response:
    """'Mark all above as read': the ids of the rows of the page that was shown."""
    require_admin(request)
    form = await form_with_csrf(request)
    ids = parse_ids(form.get("ids") or [], limit=5000)
    if not ids:
        raise HTTPException(400, "no items to mark (or too many at once)")
    await web_state(request).tidings.items.mark_read(ids, True)
    web_state(request).changed()
    return RedirectResponse(safe_next(form.get("next")), status_code=303)
