"""The Google Reader API under ``/api/greader`` and FreshRSS's ``/api/greader.php`` (R-API-3),
for Reeder, NetNewsWire, newsboat, Read You and the other clients of FreshRSS and Miniflux.

Log in with ``ClientLogin`` (user ``admin``, an API token as the password: one
token per client, an app password that revoking logs out); the answer's
``Auth`` is that token, which the client then sends as ``Authorization:
GoogleLogin auth=…``. The admin password itself is never accepted here: it is
kept only as an Argon2 hash, and a client would store it in clear.

JSON under ``reader/api/0/``, and the original Atom stream under
``reader/atom/<stream>`` that newsboat reads. Stream and id vocabulary: see
``greader_streams``. Isolated sources appear nowhere. Errors are the API's
JSON ``{"detail": …}`` with a 4xx status.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, HTTPException, Query, Request
from lxml import etree
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.responses import JSONResponse, PlainTextResponse, Response

from tidings.app import ApiToken, ItemQuery, SourceUpdate, Tidings
from tidings.app.paging import micros
from tidings.app.standalone import guard_refusal
from tidings.errors import ConfigError, NotFoundError, TidingsError
from tidings.model import Item, ItemBrief, Source, Visibility
from tidings.web import auth
from tidings.web import greader_streams as gs
from tidings.web.context import web_state
from tidings.web.feeds_out import base_url
from tidings.web.feedwriter import ATOM, FeedMeta, atom
from tidings.web.greader_page import Page, contents
from tidings.web.textout import title_text, web_link

PREFIX = "/api/greader"
USER = "admin"
GR_NS = "http://www.google.com/schemas/reader/atom/"
GR_SCHEME = "http://www.google.com/reader/"
MAX_N = 1000  # items with their text a page
MAX_REFS = 10_000  # ids a page
MAX_IDS = 10_000

#: every route below, served under both addresses (``router``, at the end)
routes = APIRouter(include_in_schema=False)


# ------------------------------------------------------------------ logging in


def _token_from(value: str, request: Request) -> ApiToken:
    if not value or len(value) > 200:
        raise _unauthorized()
    token = web_state(request).tidings.tokens.find(auth.digest(value))
    if token is None:
        raise _unauthorized()
    return token


def _unauthorized() -> HTTPException:
    return HTTPException(401, "Unauthorized: log in with ClientLogin (user admin, an API "
                              "token as the password)", {"WWW-Authenticate": "GoogleLogin"})


def client(request: Request) -> ApiToken:
    """The API token of a request: ``GoogleLogin auth=…`` (or ``Bearer …``)."""
    header = request.headers.get("authorization", "")
    scheme, _, rest = header.partition(" ")
    if scheme.lower() == "googlelogin" and rest.strip().lower().startswith("auth="):
        return _token_from(rest.strip()[5:].strip(), request)
    if scheme.lower() == "bearer":
        return _token_from(rest.strip(), request)
    raise _unauthorized()


Client = Annotated[ApiToken, Depends(client)]


async def _params(request: Request) -> FormData:
    """The query string and, on a POST, the form: clients put parameters in either."""
    pairs: list[tuple[str, str | UploadFile]] = list(request.query_params.multi_items())
    if request.method == "POST":
        form = await request.form(max_files=0, max_fields=MAX_IDS + 100)
        pairs += [(k, v) for k, v in form.multi_items() if isinstance(v, str)]
    return FormData(pairs)


@routes.api_route("/accounts/ClientLogin", methods=["GET", "POST"])
async def client_login(request: Request) -> Response:
    params = await _params(request)
    email, password = str(params.get("Email") or ""), str(params.get("Passwd") or "")
    if email.strip().lower() != USER:
        raise _unauthorized()
    token = _token_from(password, request)
    del token  # the token itself is the session: nothing to record
    if params.get("output") == "json":
        return JSONResponse({"SID": password, "LSID": "", "Auth": password})
    return PlainTextResponse(f"SID={password}\nLSID=\nAuth={password}\n")


def edit_token(request: Request, token: ApiToken) -> str:
    """The ``T`` a client passes with its writes: bound to its API token."""
    secret = web_state(request).csrf_secret
    return hmac.new(secret.encode(), f"greader:{token.id}".encode(),
                    hashlib.sha256).hexdigest()[:57]


def _check_edit_token(request: Request, token: ApiToken, params: FormData) -> None:
    given = params.get("T")
    if isinstance(given, str) and given and not hmac.compare_digest(
            given, edit_token(request, token)):
        raise HTTPException(401, "bad T token: get a new one from reader/api/0/token",
                            {"X-Reader-Google-Bad-Token": "true"})


@routes.get("/reader/api/0/token")
async def token_route(request: Request, token: Client) -> Response:
    return PlainTextResponse(edit_token(request, token))


@routes.get("/reader/api/0/user-info")
async def user_info(request: Request, token: Client) -> Any:
    return {"userId": "1", "userName": USER, "userProfileId": "1", "userEmail": "",
            "isBloggerUser": False, "signupTimeSec": 0, "isMultiLoginEnabled": False}


# ------------------------------------------------------------ subscriptions


def visible_sources(request: Request) -> dict[str, Source]:
    return {sid: s for sid, s in web_state(request).sources().items()
            if s.visibility is Visibility.EDITORIAL}


def _subscription(s: Source, base: str) -> dict[str, Any]:
    folder = [{"id": gs.LABEL + s.folder, "label": title_text(s.folder)}] if s.folder else []
    return {"id": f"feed/{s.id}", "title": title_text(s.title or s.id), "categories": folder,
            "url": s.url, "htmlUrl": web_link(s.site_url) or f"{base}/source/{s.id}",
            "iconUrl": "", "firstitemmsec": "0"}


@routes.get("/reader/api/0/subscription/list")
async def subscription_list(request: Request, token: Client) -> Any:
    base = base_url(request)
    return {"subscriptions": [_subscription(s, base) for s in visible_sources(request).values()]}


@routes.post("/reader/api/0/subscription/edit")
async def subscription_edit(request: Request, token: Client) -> Response:
    params = await _params(request)
    _check_edit_token(request, token, params)
    action = str(params.get("ac") or "edit")
    streams = [str(s) for s in params.getlist("s")]
    if not streams or action not in {"subscribe", "unsubscribe", "edit"}:
        raise ConfigError("pass s=feed/… and ac=subscribe, unsubscribe or edit")
    tid = web_state(request).tidings
    for stream in streams:
        await _edit_one(request, tid, action, stream, params)
    web_state(request).changed()
    return PlainTextResponse("OK")


async def _edit_one(request: Request, tid: Tidings, action: str, stream: str,
                    params: FormData) -> None:
    if not stream.startswith("feed/"):
        raise ConfigError(f"not a subscription: {stream[:200]!r}")
    folder = _label(params.get("a"))
    title = str(params.get("t") or "")
    if action == "subscribe":
        if refused := guard_refusal(tid.settings, stream.removeprefix("feed/")):
            raise ConfigError(refused)  # at once, as `tidings add` does: nothing stored
        await tid.sources.create(stream.removeprefix("feed/"), title=title, folder=folder)
        return
    source = gs.feed_source(stream, visible_sources(request))
    if action == "unsubscribe":
        await tid.sources.remove(source.id)
        return
    removed = _label(params.get("r"))
    update = SourceUpdate(title=title) if title else SourceUpdate()
    if folder:
        update = SourceUpdate(title=update.title, folder=folder)
    elif removed and source.folder == removed:
        update = SourceUpdate(title=update.title, folder=None)
    if update:
        await tid.sources.update(source.id, update)


def _label(value: object) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    stream = gs.canonical(value)
    if not stream.startswith(gs.LABEL):
        raise ConfigError(f"not a folder label: {value[:200]!r}")
    name = stream.removeprefix(gs.LABEL).strip()
    return name or None


@routes.post("/reader/api/0/subscription/quickadd")
async def quickadd(request: Request, token: Client) -> Any:
    params = await _params(request)
    _check_edit_token(request, token, params)
    url = str(params.get("quickadd") or "").removeprefix("feed/")
    if not url:
        raise ConfigError("pass quickadd=<address of a site or feed>")
    try:
        source = await web_state(request).tidings.sources.add(url)
    except TidingsError as exc:  # nothing found there, or it could not be fetched
        return JSONResponse({"numResults": 0, "query": url, "detail": str(exc)}, 400)
    web_state(request).changed()
    return {"numResults": 1, "query": url, "streamId": f"feed/{source.id}",
            "streamName": source.title or source.id}


@routes.get("/reader/api/0/tag/list")
async def tag_list(request: Request, token: Client) -> Any:
    # only folders with a visible source: an empty one would be a stream that 404s
    folders = dict.fromkeys(s.folder for s in visible_sources(request).values() if s.folder)
    return {"tags": [{"id": gs.STARRED}] + [{"id": gs.LABEL + f, "type": "folder"}
                                           for f in folders]}


@routes.get("/reader/api/0/unread-count")
async def unread_count(request: Request, token: Client) -> Any:
    sources = visible_sources(request)
    unread = {c.source_id: (c.count, c.newest)
              for c in web_state(request).tidings.compat.unread_counts(True)}
    # every feed and folder, those with 0 unread too (as FreshRSS and Miniflux answer):
    # a client clears its badge only for a stream it is told about
    counts = [(sid, *unread.get(sid, (0, None))) for sid in sources]
    out = [_count(f"feed/{sid}", count, when) for sid, count, when in counts]
    totals: dict[str, int] = {}
    newest: dict[str, datetime] = {}
    for sid, count, when in counts:
        folder = sources[sid].folder
        if folder:
            totals[folder] = totals.get(folder, 0) + count
            if when and (folder not in newest or when > newest[folder]):
                newest[folder] = when
    out += [_count(gs.LABEL + name, total, newest.get(name)) for name, total in totals.items()]
    newest_all = max((when for _, _, when in counts if when), default=None)
    total = sum(count for _, count, _ in counts)
    out.append(_count(gs.READING_LIST, total, newest_all))
    return {"max": total, "unreadcounts": out}


def _count(stream: str, count: int, newest: datetime | None) -> dict[str, Any]:
    return {"id": stream, "count": count,
            "newestItemTimestampUsec": str(micros(newest)) if newest else "0"}


# ------------------------------------------------------------------ streams

#: any page size is taken and more than MAX_N served as MAX_N with a continuation:
#: RSS Guard asks n=200000 and NetNewsWire 10000, and a 422 stops their sync
N = Annotated[int, Query(ge=1, le=2**62)]
#: seconds since 1970, fractions taken (NetNewsWire sends ot=1733000000.123)
Stamp = Annotated[float | None, Query(ge=0, le=10**11)]
Text = Annotated[str | None, Query(max_length=600)]


def _stream_query(request: Request, stream: str, *, n: int, c: str | None, r: str | None,
                  ot: float | None, nt: float | None) -> ItemQuery:
    params = request.query_params
    return gs.with_filters(
        gs.stream_query(stream, visible_sources(request)),
        exclude=[x[:600] for x in params.getlist("xt")][:10],
        include=[x[:600] for x in params.getlist("it")][:10],
        newer_than=ot, older_than=nt, oldest_first=r == "o", continuation=c, limit=n)


def _page(request: Request, stream: str) -> Page:
    """What a stream page needs from the request, taken on the event loop."""
    return Page(stream, str(request.url), visible_sources(request), base_url(request))


def _json(body: bytes) -> Response:
    return Response(body, media_type="application/json")


def _next(items: Sequence[Item | ItemBrief | tuple[int, datetime]], n: int, r: str | None
          ) -> str | None:
    return gs.continuation_of(items[-1], r == "o") if len(items) == n and items else None


@routes.get("/reader/api/0/stream/contents/{stream:path}")
@routes.get("/reader/api/0/stream/contents")
async def stream_contents(request: Request, token: Client, stream: str = "",
                          s: Text = None, n: N = 20, c: Text = None, r: Text = None,
                          ot: Stamp = None, nt: Stamp = None) -> Any:
    """Read and written on a worker thread: a page of 1,000 items is the longest work
    this API does, and other requests would otherwise wait behind it."""
    stream, n = stream or s or gs.READING_LIST, min(n, MAX_N)
    query = _stream_query(request, stream, n=n, c=c, r=r, ot=ot, nt=nt)
    page, compat = _page(request, stream), web_state(request).tidings.compat

    def build() -> bytes:
        entries = compat.stream_entries(query)
        more = None
        if len(entries) == n and entries:
            more = gs.cursor(entries[-1].id, entries[-1].sort_us, r == "o")
        return contents(page, entries, more)

    return _json(await run_in_threadpool(build))


@routes.get("/reader/api/0/stream/items/ids")
async def item_ids(request: Request, token: Client, s: Text = None, n: N = 20,
                   c: Text = None, r: Text = None, ot: Stamp = None,
                   nt: Stamp = None) -> Any:
    """Ids only, so up to MAX_REFS a page: NetNewsWire and Read You ask 10,000 unread
    ids at once and do not follow a continuation."""
    n = min(n, MAX_REFS)
    query = _stream_query(request, s or gs.READING_LIST, n=n, c=c, r=r, ot=ot, nt=nt)
    refs = web_state(request).tidings.compat.item_refs(query)
    out: dict[str, Any] = {"itemRefs": [
        {"id": str(item_id), "directStreamIds": [], "timestampUsec": str(micros(when))}
        for item_id, when in refs]}
    if more := _next(refs, n, r):
        out["continuation"] = more
    return _json(orjson.dumps(out))


@routes.api_route("/reader/api/0/stream/items/contents", methods=["GET", "POST"])
async def item_contents(request: Request, token: Client) -> Any:
    """Up to MAX_IDS ids (RSS Guard sends 9,999 at once to a FreshRSS server), served
    MAX_N at a time: ``c`` is then where the next page starts in the list sent, and
    the client sends the same list again with it, as RSS Guard does."""
    params = await _params(request)
    ids = _ids(params)
    start = _offset(params.get("c"))
    more = str(start + MAX_N) if len(ids) > start + MAX_N else None
    ids = ids[start:start + MAX_N]
    page, compat = _page(request, gs.READING_LIST), web_state(request).tidings.compat

    def build() -> bytes:
        entries = compat.stream_entries(ItemQuery(ids=tuple(ids), editorial_only=True,
                                                  limit=len(ids)))
        order = {item_id: n for n, item_id in enumerate(ids)}
        entries.sort(key=lambda e: order[e.id])
        return contents(page, entries, more)

    return _json(await run_in_threadpool(build))


def _offset(value: object) -> int:
    if value is None or value == "":
        return 0
    if not isinstance(value, str) or not value.isdigit() or len(value) > 6:
        raise ConfigError("c: the continuation a page of these items gave")
    return int(value)


def _ids(params: FormData) -> list[int]:
    values = [str(v) for v in params.getlist("i")]
    if not values:
        raise ConfigError("pass the items as i=<id> (one or more)")
    if len(values) > MAX_IDS:
        raise ConfigError(f"at most {MAX_IDS} items at once")
    return list(dict.fromkeys(gs.parse_item_id(v) for v in values))


# ------------------------------------------------------------------ changes


@routes.post("/reader/api/0/edit-tag")
async def edit_tag(request: Request, token: Client) -> Response:
    """Read, kept-unread and starred on items; every id is checked before any change."""
    params = await _params(request)
    _check_edit_token(request, token, params)
    ids = _ids(params)
    add = {gs.canonical(str(a)) for a in params.getlist("a")}
    remove = {gs.canonical(str(r)) for r in params.getlist("r")}
    tid = web_state(request).tidings
    found = tid.compat.item_refs(ItemQuery(ids=tuple(ids), editorial_only=True, limit=len(ids)))
    missing = set(ids) - {item_id for item_id, _ in found}
    if missing:
        raise NotFoundError(f"no item {gs.long_id(min(missing))}")
    read = _flag(add, remove, gs.READ, gs.KEPT_UNREAD)
    starred = _flag(add, remove, gs.STARRED, None)
    if read is not None:
        await tid.items.mark_read(ids, read)
    if starred is not None:
        await tid.items.star(ids, starred)
    web_state(request).changed()
    return PlainTextResponse("OK")


def _flag(add: set[str], remove: set[str], tag: str, opposite: str | None) -> bool | None:
    if tag in add or (opposite is not None and opposite in remove):
        return True
    if tag in remove or (opposite is not None and opposite in add):
        return False
    return None


@routes.post("/reader/api/0/rename-tag")
async def rename_tag(request: Request, token: Client) -> Response:
    """A folder renamed: ``s`` and ``dest`` are labels (NetNewsWire, Read You)."""
    params = await _params(request)
    _check_edit_token(request, token, params)
    old, new = _label(params.get("s")), _label(params.get("dest"))
    if not old or not new:
        raise ConfigError("pass s=user/-/label/<folder> and dest=user/-/label/<new name>")
    if not await web_state(request).tidings.folders.rename(old, new):
        raise NotFoundError(f"no folder {old!r}")
    web_state(request).changed()
    return PlainTextResponse("OK")


@routes.post("/reader/api/0/disable-tag")
async def disable_tag(request: Request, token: Client) -> Response:
    """A folder removed; its sources stay, in no folder (as FreshRSS does)."""
    params = await _params(request)
    _check_edit_token(request, token, params)
    name = _label(params.get("s"))
    if not name:
        raise ConfigError("pass s=user/-/label/<folder>")
    if not await web_state(request).tidings.folders.delete(name):
        raise NotFoundError(f"no folder {name!r}")
    web_state(request).changed()
    return PlainTextResponse("OK")


@routes.post("/reader/api/0/mark-all-as-read")
async def mark_all_as_read(request: Request, token: Client) -> Response:
    params = await _params(request)
    _check_edit_token(request, token, params)
    stream = str(params.get("s") or "")
    if not stream:
        raise ConfigError("pass s=<stream>")
    query = gs.stream_query(stream, visible_sources(request))
    ts = str(params.get("ts") or "")
    if ts:  # what had arrived when the client looked: the item stored at ts included
        query = replace(query, arrived_until=gs.from_usec(ts))
    await web_state(request).tidings.compat.set_read_where(query, True)
    web_state(request).changed()
    return PlainTextResponse("OK")


# ------------------------------------------------------------------ Atom


@routes.get("/reader/atom/{stream:path}")
async def atom_stream(request: Request, token: Client, stream: str, n: N = 20,
                      c: Text = None, r: Text = None, ot: Stamp = None,
                      nt: Stamp = None) -> Response:
    """The original Google Reader Atom stream (what newsboat reads)."""
    n = min(n, MAX_N)
    query = _stream_query(request, stream, n=n, c=c, r=r, ot=ot, nt=nt)
    items = web_state(request).tidings.items.query(query)
    sources, base = visible_sources(request), base_url(request)
    title = sources[query.source_id].title if query.source_id in sources else stream
    meta = FeedMeta(id=f"tag:google.com,2005:reader/{gs.canonical(stream)}",
                    title=title or stream, self_url=str(request.url), home_url=base + "/")

    def dialect(entry: etree._Element, item: Item) -> None:
        entry.set(f"{{{GR_NS}}}crawl-timestamp-msec", str(micros(item.discovered_at) // 1000))
        source = sources.get(item.source_id)
        for term in gs.categories_of(item, source.folder if source else None):
            category = etree.SubElement(entry, f"{{{ATOM}}}category", term=term,
                                        scheme=GR_SCHEME, label=term.rsplit("/", 1)[-1])
            del category
        origin = entry.find(f"{{{ATOM}}}source")
        if origin is not None:
            origin.set(f"{{{GR_NS}}}stream-id", f"feed/{item.source_id}")

    def continuation(feed: etree._Element) -> None:
        if more := _next(items, n, r):
            etree.SubElement(feed, f"{{{GR_NS}}}continuation").text = more

    body = atom(meta, items, dialect, {"gr": GR_NS}, id_of=lambda i: gs.long_id(i.id),
                feed_extra=continuation)
    return Response(body, media_type="application/atom+xml; charset=utf-8")


#: the API at its own address and at FreshRSS's, ``/api/greader.php``, which clients in
#: "FreshRSS" mode (RSS Guard, FeedMe) add to the server's address themselves
router = APIRouter(include_in_schema=False)
router.include_router(routes, prefix=PREFIX)
router.include_router(routes, prefix=PREFIX + ".php")
