"""``POST /api/ingest/items``: push ingest for scripts (R-INGEST-1…4).

The edge of push ingest: the token (a Bearer API token of at least 16
characters; placeholders such as "changeme" are refused before any lookup, and
a presented token is found by its SHA-256, so timing tells nothing about a
stored one), the rate (``ingest_per_minute`` requests per client address per
minute, 429 with ``Retry-After`` beyond), the size of the body and the shape of
each item. What becomes of the items is decided in ``tidings.app.ingest``.
"""

from __future__ import annotations

import hmac
import math
import re
import threading
import time
from collections import deque
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from tidings.app import MAX_ITEMS, IngestReport, PushedItem
from tidings.dates import utc_instant
from tidings.web import auth
from tidings.web.context import client_address, web_state

#: the largest request body read (50 items with full bodies fit easily)
MAX_BODY = 2 * 1024 * 1024
MIN_TOKEN = 16
_PLACEHOLDERS = frozenset({"changeme", "change-me", "change_me", "password", "secret",
                           "token", "your-token", "your_token", "yourtoken", "example",
                           "placeholder", "test", "testtoken", "apitoken", "api-token"})
_WINDOW = 60.0

router = APIRouter(prefix="/api/ingest", tags=["ingest"])


def _instant(when: datetime | None) -> datetime | None:
    return None if when is None else utc_instant(when)  # the one date rule (tidings.dates)


class IngestItemIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: Annotated[str | None, Field(max_length=2000)] = None
    url: Annotated[str | None, Field(max_length=4000)] = None
    id: Annotated[str | None, Field(max_length=2000,
                                    description="the item's own id (guid), if it has one")] = None
    summary: Annotated[str, Field(max_length=20_000)] = ""
    content_html: Annotated[str | None, Field(max_length=500_000)] = None
    author: Annotated[str, Field(max_length=300)] = ""
    published_at: Annotated[datetime | None, AfterValidator(_instant)] = None
    tags: Annotated[list[Annotated[str, Field(max_length=100)]], Field(max_length=30)] = []
    backfill: bool = Field(False, description="history: follows the timeline rule R-DEDUP-7")


class IngestIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source_id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$", description=(
        "an external source's id; an unknown id creates an isolated external source"))]
    items: Annotated[list[IngestItemIn], Field(min_length=1, max_length=MAX_ITEMS)]


class ItemResultOut(BaseModel):
    index: int
    status: str = Field(description="stored, unchanged or skipped")
    id: int | None
    reason: str | None


class IngestOut(BaseModel):
    source_id: str
    created_source: bool = Field(description="true: the source is new and isolated until an "
                                             "admin promotes it")
    stored: int
    unchanged: int
    skipped: int
    items: list[ItemResultOut]


class RateLimit:
    """At most ``per_minute`` requests per client address in any 60 seconds."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def retry_after(self, client: str, now: float | None = None) -> int:
        """0 when the request may go ahead (and counts it), else seconds to wait."""
        now = time.monotonic() if now is None else now
        with self._lock:
            if len(self._seen) > 10_000:
                self._sweep(now)
            hits = self._seen.setdefault(client, deque())
            while hits and now - hits[0] >= _WINDOW:
                hits.popleft()
            if len(hits) >= self.per_minute:
                return max(1, math.ceil(_WINDOW - (now - hits[0])))
            hits.append(now)
            return 0

    def _sweep(self, now: float) -> None:
        for key in [k for k, v in self._seen.items() if not v or now - v[-1] >= _WINDOW]:
            del self._seen[key]


def _limiter(request: Request) -> RateLimit:
    limiter: RateLimit | None = getattr(request.app.state, "ingest_limiter", None)
    if limiter is None:
        limiter = RateLimit(web_state(request).tidings.settings.ingest_per_minute)
        request.app.state.ingest_limiter = limiter
    return limiter


def is_placeholder(token: str) -> bool:
    """Values people leave in example configs: never a token, whatever is stored."""
    bare = token.strip().lower()
    return (not bare or bare in _PLACEHOLDERS or len(set(bare)) <= 2
            or bool(re.fullmatch(r"(x+|\*+|\.+|<[^>]*>|\{[^}]*\}|\$\{?[a-z_]+\}?)", bare)))


def check_token(request: Request) -> None:
    """401 unless the request carries a real API token as ``Authorization: Bearer``."""
    header = request.headers.get("authorization", "")
    value = header[7:].strip() if header[:7].lower() == "bearer " else ""
    if len(value) < MIN_TOKEN or is_placeholder(value):
        raise _unauthorized()
    digest = auth.digest(value)
    token = web_state(request).tidings.tokens.find(digest)
    if token is None or not hmac.compare_digest(token.digest, digest):
        raise _unauthorized()


def _unauthorized() -> HTTPException:
    return HTTPException(401, "pass an API token of at least 16 characters as "
                              "Authorization: Bearer <token> (settings page)",
                         {"WWW-Authenticate": "Bearer"})


async def read_body(request: Request, limit: int = MAX_BODY) -> bytes:
    """The request body, refused with 413 past ``limit`` bytes (read no further)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"the body is larger than {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"the body is larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """A model's JSON schema with its ``$defs`` written in place (the body is read by
    hand, to cap its size, so FastAPI does not list the model among the components)."""
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("#/$defs/"):
                return walk(defs[ref.removeprefix("#/$defs/")])
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    inlined: dict[str, Any] = walk(schema)
    return inlined


_OPENAPI: dict[str, Any] = {"requestBody": {"required": True, "content": {
    "application/json": {"schema": _inlined(IngestIn.model_json_schema())}}}}


@router.post("/items", response_model=IngestOut, openapi_extra=_OPENAPI, responses={
    401: {"description": "missing, short, placeholder or unknown token"},
    400: {"description": "source_id names a source tidings collects itself"},
    413: {"description": "body too large"}, 422: {"description": "not a valid request"},
    429: {"description": "too many requests from this address; see Retry-After"}})
async def ingest_items(request: Request) -> Any:
    """Push up to 50 items into an external source (R-INGEST). Each item is answered:
    ``stored``, ``unchanged`` or ``skipped`` with the reason."""
    check_token(request)
    wait = _limiter(request).retry_after(client_address(request))
    if wait:
        raise HTTPException(429, f"at most {_limiter(request).per_minute} requests a minute; "
                                 f"try again in {wait} s", {"Retry-After": str(wait)})
    try:
        body = IngestIn.model_validate_json(await read_body(request))
    except ValidationError as exc:
        raise HTTPException(422, _errors(exc)) from None
    pushed = [PushedItem(title=i.title, url=i.url, guid=i.id, summary=i.summary,
                         content_html=i.content_html, author=i.author,
                         published_at=i.published_at, tags=tuple(i.tags), backfill=i.backfill)
              for i in body.items]
    report = await web_state(request).tidings.ingest.push(body.source_id, pushed)
    web_state(request).changed()
    return _out(report)


def _errors(exc: ValidationError) -> list[dict[str, Any]]:
    return [{"loc": ["body", *e.get("loc", ())], "msg": str(e.get("msg", "")),
             "type": str(e.get("type", ""))} for e in exc.errors()[:20]]


def _out(report: IngestReport) -> IngestOut:
    return IngestOut(source_id=report.source_id, created_source=report.created_source,
                     stored=report.count("stored"), unchanged=report.count("unchanged"),
                     skipped=report.count("skipped"),
                     items=[ItemResultOut(index=r.index, status=r.status, id=r.id,
                                          reason=r.reason) for r in report.results])
