"""The JSON API (R-API-1), documented by the OpenAPI document at /api/openapi.json.

Authentication: ``Authorization: Bearer <token>`` (tokens from the settings page),
or the browser session plus the ``X-CSRF-Token`` header for writes. Errors are
``{"detail": "..."}`` with a 4xx status.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, Field
from starlette.responses import Response

from tidings.app import ItemQuery, Tidings
from tidings.app.paging import decode_cursor, encode_cursor
from tidings.app.state import state_of
from tidings.errors import NotFoundError
from tidings.model import FetchRun, Item, ItemBrief, Source, Visibility
from tidings.web.context import Viewer, check_api_csrf, viewer, web_state
from tidings.web.edge import MAX_ID, ItemId
from tidings.web.sidebar import TODAY_HOURS


class Unauthorized(Exception):  # noqa: N818 - a control-flow signal
    """Reading needs a token or a session; answered with 401 JSON."""


def api_reader(request: Request) -> Viewer:
    who = viewer(request)
    if not who.can_read:
        raise Unauthorized
    return who


def api_writer(request: Request) -> Viewer:
    who = viewer(request)
    if not who.admin:
        raise Unauthorized
    check_api_csrf(request, who)
    return who


Reader = Annotated[Viewer, Depends(api_reader)]
Writer = Annotated[Viewer, Depends(api_writer)]
router = APIRouter(prefix="/api/v1", tags=["api"],
                   responses={401: {"description": "not logged in / no valid token"}})


class View(StrEnum):
    ALL = "all"
    TODAY = "today"
    UNREAD = "unread"
    STARRED = "starred"


class ItemOut(BaseModel):
    id: int
    title: str
    url: str | None
    source_id: str
    source_title: str
    author: str
    published_at: datetime | None
    discovered_at: datetime
    read: bool
    starred: bool
    backfill: bool
    body_state: str
    cursor: str = Field(description="pass as `before` to continue after this item")
    cluster_id: int | None = Field(
        default=None, description="the story it belongs to (the id of the story's first "
        "item); null until it is clustered")
    heat: float = Field(default=0.0, description="the story's heat: independent sources of the "
                        "last 48 h, each halving every 24 h")


class ItemFull(ItemOut):
    summary: str
    body: str | None = Field(description="sanitized HTML")
    categories: list[str]


class ItemPage(BaseModel):
    items: list[ItemOut]
    next: str | None = Field(description="cursor of the next page, null at the end")


class HitOut(BaseModel):
    item: ItemOut
    snippet: str = Field(description="HTML-escaped text with <mark> around matches")


class SearchPage(BaseModel):
    hits: list[HitOut]
    next: str | None


class SourceOut(BaseModel):
    id: str
    kind: str
    url: str
    title: str
    health: str
    visibility: str
    interval_min: int
    next_fetch_at: datetime | None
    last_success_at: datetime | None
    last_error: str | None
    fail_count: int
    #: health, or new (never read), or waiting (held back by a paid API: app.state)
    state: str
    #: why it is waiting: the budget or the provider's trouble, in one line
    waiting: str | None = None


class StateChange(BaseModel):
    read: bool | None = None
    starred: bool | None = None


class BatchChange(StateChange):
    ids: list[Annotated[int, Field(ge=1, le=MAX_ID)]] = Field(min_length=1, max_length=1000)


class Updated(BaseModel):
    updated: int


class SpendOut(BaseModel):
    calls: int
    cost: float


class StatsOut(BaseModel):
    sources_by_health: dict[str, int]
    items: int
    items_unread: int
    last_round_started: datetime | None
    last_round_sources: int
    last_round_ok: int
    last_round_new_items: int
    oldest_success_at: datetime | None
    #: paid APIs: calls and cost per local day (ISO date) and provider (R-SCHED-3)
    spend_by_day: dict[str, dict[str, SpendOut]] = Field(default_factory=dict)
    #: paid APIs with a provider-wide problem now: provider -> reason
    paid_troubles: dict[str, str] = Field(default_factory=dict)


def _item_out(item: Item | ItemBrief) -> ItemOut:
    return ItemOut(id=item.id, title=item.title, url=item.url, source_id=item.source_id,
                   source_title=item.source_title, author=item.author,
                   published_at=item.published_at, discovered_at=item.discovered_at,
                   read=item.read, starred=item.starred, backfill=item.backfill,
                   body_state=item.body_state.value, cursor=encode_cursor(item))


def with_stories(tid: Tidings, items: list[ItemOut]) -> list[ItemOut]:
    """The items with their story's id and heat (R-DEDUP-12)."""
    clusters = tid.stories.of_items([i.id for i in items])
    stories = tid.stories.stories(sorted(set(clusters.values())))
    for out in items:
        cluster = clusters.get(out.id)
        if cluster is not None:
            out.cluster_id = cluster
            story = stories.get(cluster)
            out.heat = round(story.heat, 3) if story else 0.0
    return items


def _source_out(s: Source, last: FetchRun | None) -> SourceOut:
    state = state_of(s, last)
    return SourceOut(id=s.id, kind=s.kind, url=s.url, title=s.title, health=s.health.value,
                     visibility=s.visibility.value, interval_min=s.interval_min,
                     next_fetch_at=s.next_fetch_at, last_success_at=s.last_success_at,
                     last_error=s.last_error, fail_count=s.fail_count, state=state.name,
                     waiting=state.reason)


def source_out(tid: Tidings, source: Source) -> SourceOut:
    """One source as the API shows it, its state read from its latest run."""
    runs = tid.sources.runs(source.id, 1)
    return _source_out(source, runs[0] if runs else None)


def _visible(request: Request, who: Viewer, item: Item | ItemBrief) -> bool:
    if who.admin:
        return True
    source = web_state(request).sources().get(item.source_id)
    return source is None or source.visibility is Visibility.EDITORIAL


Cursor = Annotated[str | None, Query(max_length=40, pattern=r"^-?\d{1,17}\.\d{1,18}$",
                                     description="`cursor` of the last item seen")]


@router.get("/items", response_model=ItemPage)
async def list_items(
    request: Request, who: Reader, view: View = View.ALL,
    source: Annotated[str | None, Query(max_length=200)] = None,
    author: Annotated[str | None, Query(max_length=300)] = None,
    before: Cursor = None, limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> Any:
    """Items newest first, one page at a time (keyset paging)."""
    query = ItemQuery(source_id=source, author=author, before=decode_cursor(before), limit=limit,
                      unread_only=view is View.UNREAD, starred_only=view is View.STARRED,
                      editorial_only=not who.admin)
    if view is View.TODAY:
        query = replace(query, include_backfill=False,
                        since=datetime.now(UTC) - timedelta(hours=TODAY_HOURS))
    tid = web_state(request).tidings
    items = tid.items.briefs(query)
    out = with_stories(tid, [_item_out(i) for i in items if _visible(request, who, i)])
    return ItemPage(items=out, next=encode_cursor(items[-1]) if len(items) == limit else None)


@router.get("/items/{item_id}", response_model=ItemFull,
            responses={404: {"description": "no such item"}})
async def get_item(request: Request, who: Reader, item_id: ItemId) -> Any:
    item = web_state(request).tidings.items.get(item_id)
    if not _visible(request, who, item):
        raise NotFoundError(f"no item {item_id}")
    (out,) = with_stories(web_state(request).tidings, [_item_out(item)])
    return ItemFull(**out.model_dump(), summary=item.summary, body=item.body,
                    categories=list(item.categories))


@router.patch("/items/{item_id}", response_model=ItemOut,
              responses={403: {"description": "CSRF header missing"},
                         404: {"description": "no such item"}})
async def change_item(request: Request, who: Writer, item_id: ItemId, change: StateChange) -> Any:
    """Set the read and/or starred state of one item; answers the item as GET's list
    rows do (with its story's id and heat)."""
    tid = web_state(request).tidings
    tid.items.get(item_id)
    await _apply(request, [item_id], change)
    (out,) = with_stories(tid, [_item_out(tid.items.get(item_id))])
    return out


@router.delete("/items/{item_id}", status_code=204,
               responses={403: {"description": "CSRF header missing"},
                          404: {"description": "no such item"}})
async def delete_item(request: Request, who: Writer, item_id: int) -> Response:
    """Delete one item; its tombstone keeps the next fetch from bringing it back."""
    st = web_state(request)
    await st.tidings.items.delete(item_id)
    st.changed()
    return Response(status_code=204)


@router.post("/items/state", response_model=Updated,
             responses={403: {"description": "CSRF header missing"}})
async def change_items(request: Request, who: Writer, change: BatchChange) -> Any:
    """Set read and/or starred on many items at once (what offline replay sends)."""
    return Updated(updated=await _apply(request, change.ids, change))


async def _apply(request: Request, ids: list[int], change: StateChange) -> int:
    st = web_state(request)
    updated = 0
    if change.read is not None:
        updated = await st.tidings.items.mark_read(ids, change.read)
    if change.starred is not None:
        updated = max(updated, await st.tidings.items.star(ids, change.starred))
    st.changed()
    return updated


@router.get("/search", response_model=SearchPage,
            responses={400: {"description": "bad search syntax"}})
async def search(
    request: Request, who: Reader, q: Annotated[str, Query(min_length=1, max_length=500)],
    ranked: bool = False, before: Cursor = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> Any:
    """Search (R-API-5 syntax: words, "phrases", intitle:, author:, source:, date:, -not)."""
    hits = await web_state(request).search(q, ranked=ranked, limit=limit,
                                           before=decode_cursor(before))
    out = [HitOut(item=_item_out(h.item), snippet=h.snippet) for h in hits
           if _visible(request, who, h.item)]
    more = len(hits) == limit and not ranked
    return SearchPage(hits=out, next=encode_cursor(hits[-1].item) if more else None)


@router.get("/sources", response_model=list[SourceOut])
async def list_sources(request: Request, who: Reader) -> Any:
    tid = web_state(request).tidings
    last = tid.sources.last_runs()
    return [_source_out(s, last.get(s.id)) for s in tid.sources.all()
            if who.admin or s.visibility is Visibility.EDITORIAL]


@router.get("/sources/{source_id}", response_model=SourceOut,
            responses={404: {"description": "no such source"}})
async def get_source(request: Request, who: Reader, source_id: str) -> Any:
    source = web_state(request).tidings.sources.get(source_id)
    if not who.admin and source.visibility is not Visibility.EDITORIAL:
        raise NotFoundError(f"no source {source_id!r}")
    return source_out(web_state(request).tidings, source)


@router.get("/stats", response_model=StatsOut)
async def stats(request: Request, who: Reader) -> Any:
    s = web_state(request).stats()
    tidings = web_state(request).tidings
    return StatsOut(sources_by_health=dict(s.sources_by_health), items=s.items,
                    items_unread=s.items_unread, last_round_started=s.last_round_started,
                    last_round_sources=s.last_round_sources, last_round_ok=s.last_round_ok,
                    last_round_new_items=s.last_round_new_items,
                    oldest_success_at=s.oldest_success_at,
                    **(_spend(tidings) if who.admin else {}))


def _spend(tidings: Tidings) -> dict[str, Any]:
    """What the paid APIs cost (shown to the admin only, like the sources' errors)."""
    return {"spend_by_day": {day: {p: SpendOut(calls=u.calls, cost=u.cost)
                                   for p, u in used.items()}
                             for day, used in tidings.paid.by_day().items()},
            "paid_troubles": {p: t.reason for p, t in tidings.paid.troubles().items()}}
