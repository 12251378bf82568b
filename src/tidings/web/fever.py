"""The Fever API at ``/api/fever?api`` (R-API-3), for Reeder, FeedMe, Unread and friends.

Fever authenticates every call with ``api_key`` = MD5 of ``email:password``. The
password here is an API token made on the settings page (user ``admin``); the
archive keeps that MD5 beside the token when the token is made (``compat``), never
the token itself, and revoking the token ends the client's access.

Fever numbers everything: items keep their ids; sources and folders (Fever's
feeds and groups) get a stable number from a hash of their id or name (group 0
is everything, as in Fever). Isolated sources appear nowhere. A refused key is
200 with ``auth: 0`` (as Fever and FreshRSS answer); bad arguments are 400 with
the reason; unknown item, feed and group ids are ignored, as those servers do;
nothing is changed unless the whole request is good.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from starlette.datastructures import FormData, UploadFile
from starlette.responses import JSONResponse, Response

from tidings.app import ItemQuery, Tidings
from tidings.model import Item, Source, Visibility
from tidings.web.context import web_state
from tidings.web.textout import text_as_html, title_text, web_link

router = APIRouter(include_in_schema=False)
API_VERSION = 3
PAGE = 50
#: ``with_ids`` is 50 ids a call in Fever's documentation; more are served all the same
MAX_WITH_IDS = 1000
_IDS = re.compile(r"^\d{1,18}(,\d{1,18})*$")


class FeverError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def number(text: str) -> int:
    """The stable Fever number of a source id or folder name (never 0: that is "all")."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:7], 16) + 1


def _visible(tid: Tidings) -> list[Source]:
    return [s for s in tid.sources.all() if s.visibility is Visibility.EDITORIAL]


async def _params(request: Request) -> FormData:
    pairs: list[tuple[str, str | UploadFile]] = list(request.query_params.multi_items())
    if request.method == "POST":
        form = await request.form(max_files=0, max_fields=200)
        pairs += [(k, v) for k, v in form.multi_items() if isinstance(v, str)]
    return FormData(pairs)


@router.api_route("/api/fever", methods=["GET", "POST"])
@router.api_route("/api/fever/", methods=["GET", "POST"])
async def fever(request: Request) -> Response:
    params = await _params(request)
    tid = web_state(request).tidings
    key = str(params.get("api_key") or "")
    if not key or len(key) > 64 or tid.compat.token_by_fever_key(key) is None:
        # 200 with auth 0, as Fever and FreshRSS answer: clients read the flag, and
        # some take any other status for a server that is down
        return JSONResponse({"api_version": API_VERSION, "auth": 0})
    if "api" not in params:
        return _error(400, "add ?api to the address")
    try:
        body = await _answer(tid, params)
    except FeverError as exc:
        return _error(exc.status, exc.message)
    if body.pop("_changed", False):
        web_state(request).changed()
    return JSONResponse(body)


def _error(status: int, message: str) -> Response:
    return JSONResponse({"api_version": API_VERSION, "auth": 1, "detail": message},
                        status_code=status)


async def _answer(tid: Tidings, params: FormData) -> dict[str, Any]:
    out: dict[str, Any] = {"api_version": API_VERSION, "auth": 1,
                           "last_refreshed_on_time": _last_refresh(tid)}
    if "mark" in params:
        await _mark(tid, params)
        out["_changed"] = True
    sources = _visible(tid)
    if "groups" in params:
        out["groups"] = _groups(sources)
    if "feeds" in params:
        out["feeds"] = [_feed(s) for s in sources]
    if "groups" in params or "feeds" in params:
        out["feeds_groups"] = _feeds_groups(sources)
    if "favicons" in params:
        out["favicons"] = []
    if "links" in params:
        out["links"] = []
    if "items" in params:
        out.update(_items(tid, params, {s.id for s in sources}))
    if "unread_item_ids" in params or ("mark" in params and params.get("as") in
                                       ("read", "unread")):
        out["unread_item_ids"] = _id_list(tid, ItemQuery(unread_only=True))
    if "saved_item_ids" in params or ("mark" in params and params.get("as") in
                                      ("saved", "unsaved")):
        out["saved_item_ids"] = _id_list(tid, ItemQuery(starred_only=True))
    return out


def _last_refresh(tid: Tidings) -> int:
    started = tid.reports.stats().last_round_started
    return int(started.timestamp()) if started else 0


def _folders(sources: list[Source]) -> dict[str, list[Source]]:
    out: dict[str, list[Source]] = {}
    for s in sources:
        if s.folder:
            out.setdefault(s.folder, []).append(s)
    return out


def _groups(sources: list[Source]) -> list[dict[str, Any]]:
    return [{"id": number(name), "title": title_text(name)} for name in _folders(sources)]


def _feeds_groups(sources: list[Source]) -> list[dict[str, Any]]:
    return [{"group_id": number(name),
             "feed_ids": ",".join(str(number(s.id)) for s in members)}
            for name, members in _folders(sources).items()]


def _feed(s: Source) -> dict[str, Any]:
    updated = s.last_success_at or s.created_at
    return {"id": number(s.id), "favicon_id": 0, "title": title_text(s.title or s.id),
            "url": s.url, "site_url": web_link(s.site_url) or "", "is_spark": 0,
            "last_updated_on_time": int(updated.timestamp()) if updated else 0}


def _int(params: FormData, name: str) -> int | None:
    value = params.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not value.isdigit() or len(value) > 18:
        raise FeverError(400, f"{name}: a whole number, not {str(value)[:40]!r}")
    return int(value)


def _items(tid: Tidings, params: FormData, visible: set[str]) -> dict[str, Any]:
    query = ItemQuery(editorial_only=True, limit=PAGE, order="id_desc")
    with_ids = params.get("with_ids")
    since, until = _int(params, "since_id"), _int(params, "max_id")
    if isinstance(with_ids, str) and with_ids:
        ids = _id_csv(with_ids, "with_ids")[:MAX_WITH_IDS]
        query = ItemQuery(editorial_only=True, ids=ids, limit=len(ids), order="id")
    elif since is not None:
        query = ItemQuery(editorial_only=True, min_id=since, limit=PAGE, order="id")
    elif until is not None:
        query = ItemQuery(editorial_only=True, max_id=until, limit=PAGE, order="id_desc")
    query = replace(query, source_ids=_only_sources(tid, params))
    items = [i for i in tid.items.query(query) if i.source_id in visible]
    hidden = [s.id for s in tid.sources.all() if s.id not in visible]
    total = tid.reports.stats().items - sum(tid.sources.stats(sid).items_total for sid in hidden)
    return {"items": [_item(i) for i in items], "total_items": total}


def _id_csv(value: str, name: str) -> tuple[int, ...]:
    text = value.replace(" ", "").strip(",")
    if not _IDS.fullmatch(text):
        raise FeverError(400, f"{name}: comma-separated ids")
    return tuple(int(i) for i in text.split(","))


def _only_sources(tid: Tidings, params: FormData) -> tuple[str, ...] | None:
    """The sources ``feed_ids`` and ``group_ids`` keep to (FreshRSS's extension of
    ``items``), None when neither is given; unknown numbers match nothing."""
    feeds, groups = params.get("feed_ids"), params.get("group_ids")
    if not (isinstance(feeds, str) and feeds) and not (isinstance(groups, str) and groups):
        return None
    sources = _visible(tid)
    wanted = set(_id_csv(feeds, "feed_ids")) if isinstance(feeds, str) and feeds else set()
    chosen = {s.id for s in sources if number(s.id) in wanted}
    if isinstance(groups, str) and groups:
        members = {number(n): m for n, m in _folders(sources).items()}
        for group in _id_csv(groups, "group_ids"):
            chosen |= {s.id for s in (sources if group == 0 else members.get(group, []))}
    return tuple(sorted(chosen))


def _item(item: Item) -> dict[str, Any]:
    created = item.published_at or item.discovered_at
    html = item.body or text_as_html(item.summary)  # see web/textout.py
    return {"id": item.id, "feed_id": number(item.source_id), "title": title_text(item.title),
            "author": title_text(item.author), "html": html, "url": web_link(item.url) or "",
            "is_saved": int(item.starred), "is_read": int(item.read),
            "created_on_time": int(created.timestamp())}


def _id_list(tid: Tidings, query: ItemQuery) -> str:
    refs = tid.compat.item_refs(replace(query, editorial_only=True, limit=10_000_000,
                                        order="id"))
    return ",".join(str(item_id) for item_id, _ in refs)


async def _mark(tid: Tidings, params: FormData) -> None:
    """``mark=item|feed|group``, ``as=read|unread|saved|unsaved``, ``id``, ``before``."""
    what, state = params.get("mark"), params.get("as")
    target = _int(params, "id")
    if what not in ("item", "feed", "group") or target is None:
        raise FeverError(400, "mark=item|feed|group with as=… and id=…")
    if what == "item":
        if state not in ("read", "unread", "saved", "unsaved"):
            raise FeverError(400, "as: read, unread, saved or unsaved")
        found = tid.compat.item_refs(ItemQuery(ids=(target,), editorial_only=True, limit=1))
        if not found:  # gone or never ours: nothing to do (Fever and FreshRSS answer so)
            return
        if state in ("read", "unread"):
            await tid.items.mark_read([target], state == "read")
        else:
            await tid.items.star([target], state == "saved")
        return
    if state != "read":
        raise FeverError(400, "feeds and groups can only be marked read")
    before = _int(params, "before")
    # what had arrived when the client looked, not what was published before then
    until = datetime.fromtimestamp(before, UTC) if before is not None else None
    query = ItemQuery(editorial_only=True, arrived_until=until, **_scope(tid, what, target))
    await tid.compat.set_read_where(query, True)


def _scope(tid: Tidings, what: object, target: int) -> dict[str, Any]:
    sources = _visible(tid)
    if what == "feed":
        match = [s.id for s in sources if number(s.id) == target]
        return {"source_ids": tuple(match[:1])}  # an unknown feed: nothing is marked
    if target == 0:  # Fever's "Kindling": everything
        return {}
    members = {number(n): m for n, m in _folders(sources).items()}
    return {"source_ids": tuple(s.id for s in members.get(target, []))}
