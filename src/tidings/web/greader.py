"""The Google Reader API under ``/api/greader`` (R-API-3), for Reeder, NetNewsWire,
newsboat, Read You and the other clients of FreshRSS and Miniflux.

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
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, HTTPException, Query, Request
from lxml import etree
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.responses import JSONResponse, PlainTextResponse, Response

from tidings.app import ApiToken, ItemQuery, SourceUpdate, StreamEntry, Tidings
from tidings.app.paging import micros
from tidings.app.standalone import guard_refusal
from tidings.errors import ConfigError, NotFoundError, TidingsError
from tidings.model import Item, ItemBrief, Source, Visibility
from tidings.web import auth
from tidings.web import greader_streams as gs
from tidings.web.context import web_state
from tidings.web.feeds_out import base_url
from tidings.web.feedwriter import ATOM, FeedMeta, atom

PREFIX = "/api/greader"
USER = "admin"
GR_NS = "http://www.google.com/schemas/reader/atom/"
GR_SCHEME = "http://www.google.com/reader/"
MAX_N = 1000
MAX_IDS = 1000

router = APIRouter(prefix=PREFIX, include_in_schema=False)


# ------------------------------------------------------------------ logging in


def _token_from(value: str, request: Request) -> ApiToken:
    if not value or len(value) > 200:
        raise _unauthorized()
    token = web_state(request).tidings.access.api_token(auth.digest(value))
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
        form = await request.form(max_files=0, max_fields=5000)
        pairs += [(k, v) for k, v in form.multi_items() if isinstance(v, str)]
    return FormData(pairs)


@router.api_route("/accounts/ClientLogin", methods=["GET", "POST"])
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


@router.get("/reader/api/0/token")
async def token_route(request: Request, token: Client) -> Response:
    return PlainTextResponse(edit_token(request, token))


@router.get("/reader/api/0/user-info")
async def user_info(request: Request, token: Client) -> Any:
    return {"userId": "1", "userName": USER, "userProfileId": "1", "userEmail": "",
            "isBloggerUser": False, "signupTimeSec": 0, "isMultiLoginEnabled": False}


# ------------------------------------------------------------ subscriptions


def visible_sources(request: Request) -> dict[str, Source]:
    return {sid: s for sid, s in web_state(request).sources().items()
            if s.visibility is Visibility.EDITORIAL}


def _subscription(s: Source, base: str) -> dict[str, Any]:
    folder = [{"id": gs.LABEL + s.folder, "label": s.folder}] if s.folder else []
    return {"id": f"feed/{s.id}", "title": s.title or s.id, "categories": folder,
            "url": s.url, "htmlUrl": s.site_url or f"{base}/source/{s.id}",
            "iconUrl": "", "firstitemmsec": "0"}


@router.get("/reader/api/0/subscription/list")
async def subscription_list(request: Request, token: Client) -> Any:
    base = base_url(request)
    return {"subscriptions": [_subscription(s, base) for s in visible_sources(request).values()]}


@router.post("/reader/api/0/subscription/edit")
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
        await tid.create_source(stream.removeprefix("feed/"), title=title, folder=folder)
        return
    source = gs.feed_source(stream, visible_sources(request))
    if action == "unsubscribe":
        await tid.remove_source(source.id)
        return
    removed = _label(params.get("r"))
    update = SourceUpdate(title=title) if title else SourceUpdate()
    if folder:
        update = SourceUpdate(title=update.title, folder=folder)
    elif removed and source.folder == removed:
        update = SourceUpdate(title=update.title, folder=None)
    if update:
        await tid.update_source(source.id, update)


def _label(value: object) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    stream = gs.canonical(value)
    if not stream.startswith(gs.LABEL):
        raise ConfigError(f"not a folder label: {value[:200]!r}")
    name = stream.removeprefix(gs.LABEL).strip()
    return name or None


@router.post("/reader/api/0/subscription/quickadd")
async def quickadd(request: Request, token: Client) -> Any:
    params = await _params(request)
    _check_edit_token(request, token, params)
    url = str(params.get("quickadd") or "").removeprefix("feed/")
    if not url:
        raise ConfigError("pass quickadd=<address of a site or feed>")
    try:
        source = await web_state(request).tidings.add_source(url)
    except TidingsError as exc:  # nothing found there, or it could not be fetched
        return JSONResponse({"numResults": 0, "query": url, "detail": str(exc)}, 400)
    web_state(request).changed()
    return {"numResults": 1, "query": url, "streamId": f"feed/{source.id}",
            "streamName": source.title or source.id}


@router.get("/reader/api/0/tag/list")
async def tag_list(request: Request, token: Client) -> Any:
    folders = web_state(request).tidings.folders()
    return {"tags": [{"id": gs.STARRED}] + [{"id": gs.LABEL + f, "type": "folder"}
                                           for f in folders]}


@router.get("/reader/api/0/unread-count")
async def unread_count(request: Request, token: Client) -> Any:
    sources = visible_sources(request)
    counts = [c for c in web_state(request).tidings.compat.unread_counts(True)
              if c.source_id in sources]
    out = [_count(f"feed/{c.source_id}", c.count, c.newest) for c in counts]
    totals: dict[str, int] = {}
    newest: dict[str, datetime] = {}
    for c in counts:
        folder = sources[c.source_id].folder
        if folder:
            totals[folder] = totals.get(folder, 0) + c.count
            if c.newest and (folder not in newest or c.newest > newest[folder]):
                newest[folder] = c.newest
    out += [_count(gs.LABEL + name, total, newest.get(name)) for name, total in totals.items()]
    newest_all = max((c.newest for c in counts if c.newest), default=None)
    out.append(_count(gs.READING_LIST, sum(c.count for c in counts), newest_all))
    return {"max": sum(c.count for c in counts), "unreadcounts": out}


def _count(stream: str, count: int, newest: datetime | None) -> dict[str, Any]:
    return {"id": stream, "count": count,
            "newestItemTimestampUsec": str(micros(newest)) if newest else "0"}


# ------------------------------------------------------------------ streams

N = Annotated[int, Query(ge=1, le=MAX_N)]
Stamp = Annotated[int | None, Query(ge=0, le=10**11)]
Text = Annotated[str | None, Query(max_length=600)]


def _stream_query(request: Request, stream: str, *, n: int, c: str | None, r: str | None,
                  ot: int | None, nt: int | None) -> ItemQuery:
    params = request.query_params
    return gs.with_filters(
        gs.stream_query(stream, visible_sources(request)),
        exclude=[x[:600] for x in params.getlist("xt")][:10],
        include=[x[:600] for x in params.getlist("it")][:10],
        newer_than=ot, older_than=nt, oldest_first=r == "o", continuation=c, limit=n)


@dataclass(frozen=True, slots=True)
class _Page:
    """What a stream page needs from the request, taken on the event loop so that the
    page itself can be read and written on a worker thread."""

    stream: str
    self_url: str
    sources: dict[str, Source]
    base: str

    @classmethod
    def of(cls, request: Request, stream: str) -> _Page:
        return cls(stream, str(request.url), visible_sources(request), base_url(request))


def _contents(page: _Page, entries: Sequence[StreamEntry], more: str | None) -> bytes:
    """A stream page as JSON, written straight from the stored rows: each item's fixed
    part formatted as bytes, its text (already JSON from the database) put beside it,
    and the page joined once. No dict per item: building one and serializing it cost
    three times as much, and a thousand items' worth of them once pushed the collector
    into full passes over the server's heap (docs/benchmarks.md)."""
    head: dict[str, Any] = {
        "direction": "ltr", "id": page.stream, "title": page.stream,
        "self": [{"href": page.self_url}],
        "updated": (int(max(e.updated_us for e in entries) / 10**6) if entries
                    else int(datetime.now().timestamp()))}
    if more:
        head["continuation"] = more
    shared = _Shared(page)
    parts = [orjson.dumps(head)[:-1] + b',"items":[']
    for e in entries:
        parts += (shared.head(e), e.content_json, b"}}")
    if entries:
        parts[1] = parts[1][1:]  # no comma before the first item
    parts.append(b"]}")
    return b"".join(parts)


#: an item of a stream page up to its text (which follows, then ``}}``); the comma
#: before it is dropped for the first item of a page
_ITEM = (b',{"id":"' + gs.LONG_PREFIX.encode() + b'%016x","crawlTimeMsec":"%d",'
         b'"timestampUsec":"%d","published":%d,"updated":%d,"title":%b,"canonical":%b,'
         b'"alternate":%b,"author":%b,"categories":%b,"origin":%b,'
         b'"summary":{"direction":"ltr","content":')


class _Shared:
    """What the items of one source have in common on a page (origin, categories),
    serialized once per page."""

    def __init__(self, page: _Page) -> None:
        self.page = page
        self.origins: dict[str, bytes] = {}
        self.tags: dict[tuple[str, int, int], bytes] = {}

    def head(self, e: StreamEntry) -> bytes:
        links = orjson.dumps([{"href": e.url, "type": "text/html"}]) if e.url else b"[]"
        return _ITEM % (
            e.id, e.discovered_us // 1000, e.sort_us, int(e.sort_us / 10**6),
            int(e.updated_us / 10**6), orjson.dumps(e.title), links, links,
            orjson.dumps(e.author),
            self.tags.get((e.source_id, e.read, e.starred)) or self._categories(e),
            self.origins.get(e.source_id) or self._origin(e.source_id))

    def _origin(self, source_id: str) -> bytes:
        source = self.page.sources.get(source_id)
        origin = self.origins[source_id] = orjson.dumps({
            "streamId": f"feed/{source_id}", "title": (source.title if source else None) or "",
            "htmlUrl": (source.site_url if source else None)
            or f"{self.page.base}/source/{source_id}"})
        return origin

    def _categories(self, e: StreamEntry) -> bytes:
        source = self.page.sources.get(e.source_id)
        tags = self.tags[(e.source_id, e.read, e.starred)] = orjson.dumps(gs.categories(
            source.folder if source else None, read=bool(e.read), starred=bool(e.starred)))
        return tags


def _json(body: bytes) -> Response:
    return Response(body, media_type="application/json")


def _next(items: Sequence[Item | ItemBrief | tuple[int, datetime]], n: int, r: str | None
          ) -> str | None:
    return gs.continuation_of(items[-1], r == "o") if len(items) == n and items else None


@router.get("/reader/api/0/stream/contents/{stream:path}")
@router.get("/reader/api/0/stream/contents")
async def stream_contents(request: Request, token: Client, stream: str = "",
                          s: Text = None, n: N = 20, c: Text = None, r: Text = None,
                          ot: Stamp = None, nt: Stamp = None) -> Any:
    """Read and written on a worker thread: a page of 1,000 items is the longest work
    this API does, and other requests would otherwise wait behind it."""
    stream = stream or s or gs.READING_LIST
    query = _stream_query(request, stream, n=n, c=c, r=r, ot=ot, nt=nt)
    page, compat = _Page.of(request, stream), web_state(request).tidings.compat

    def build() -> bytes:
        entries = compat.stream_entries(query)
        more = None
        if len(entries) == n and entries:
            more = gs.cursor(entries[-1].id, entries[-1].sort_us, r == "o")
        return _contents(page, entries, more)

    return _json(await run_in_threadpool(build))


@router.get("/reader/api/0/stream/items/ids")
async def item_ids(request: Request, token: Client, s: Text = None, n: N = 20,
                   c: Text = None, r: Text = None, ot: Stamp = None,
                   nt: Stamp = None) -> Any:
    query = _stream_query(request, s or gs.READING_LIST, n=n, c=c, r=r, ot=ot, nt=nt)
    refs = web_state(request).tidings.compat.item_refs(query)
    out: dict[str, Any] = {"itemRefs": [
        {"id": str(item_id), "directStreamIds": [], "timestampUsec": str(micros(when))}
        for item_id, when in refs]}
    if more := _next(refs, n, r):
        out["continuation"] = more
    return _json(orjson.dumps(out))


@router.api_route("/reader/api/0/stream/items/contents", methods=["GET", "POST"])
async def item_contents(request: Request, token: Client) -> Any:
    params = await _params(request)
    ids = _ids(params)
    page, compat = _Page.of(request, gs.READING_LIST), web_state(request).tidings.compat

    def build() -> bytes:
        entries = compat.stream_entries(ItemQuery(ids=tuple(ids), editorial_only=True,
                                                  limit=len(ids)))
        order = {item_id: n for n, item_id in enumerate(ids)}
        entries.sort(key=lambda e: order[e.id])
        return _contents(page, entries, None)

    return _json(await run_in_threadpool(build))


def _ids(params: FormData) -> list[int]:
    values = [str(v) for v in params.getlist("i")]
    if not values:
        raise ConfigError("pass the items as i=<id> (one or more)")
    if len(values) > MAX_IDS:
        raise ConfigError(f"at most {MAX_IDS} items at once")
    return list(dict.fromkeys(gs.parse_item_id(v) for v in values))


# ------------------------------------------------------------------ changes


@router.post("/reader/api/0/edit-tag")
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
        await tid.mark_read(ids, read)
    if starred is not None:
        await tid.star(ids, starred)
    web_state(request).changed()
    return PlainTextResponse("OK")


def _flag(add: set[str], remove: set[str], tag: str, opposite: str | None) -> bool | None:
    if tag in add or (opposite is not None and opposite in remove):
        return True
    if tag in remove or (opposite is not None and opposite in add):
        return False
    return None


@router.post("/reader/api/0/mark-all-as-read")
async def mark_all_as_read(request: Request, token: Client) -> Response:
    params = await _params(request)
    _check_edit_token(request, token, params)
    stream = str(params.get("s") or "")
    if not stream:
        raise ConfigError("pass s=<stream>")
    query = gs.stream_query(stream, visible_sources(request))
    ts = str(params.get("ts") or "")
    if ts:
        query = replace(query, until=gs.from_usec(ts))
    await web_state(request).tidings.compat.set_read_where(query, True)
    web_state(request).changed()
    return PlainTextResponse("OK")


# ------------------------------------------------------------------ Atom


@router.get("/reader/atom/{stream:path}")
async def atom_stream(request: Request, token: Client, stream: str, n: N = 20,
                      c: Text = None, r: Text = None, ot: Stamp = None,
                      nt: Stamp = None) -> Response:
    """The original Google Reader Atom stream (what newsboat reads)."""
    query = _stream_query(request, stream, n=n, c=c, r=r, ot=ot, nt=nt)
    items = web_state(request).tidings.items(query)
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
