"""The WebSub callback (R-RSS-8): ``/websub/callback/<source id>``, what hubs call.

GET is the hub's verification (answered with its challenge, or 404 for a
subscription we never asked for); POST is content, accepted only when
``X-Hub-Signature`` is the HMAC of the body under the subscription's secret
(403 otherwise, nothing stored). Both are the hub's business alone, so they sit
outside the reader's login (the secret and the verify token are the checks),
and ``tidings serve`` keeps the subscriptions up with :func:`keep_subscribed`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from fastapi import APIRouter, HTTPException, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from tidings.app import Tidings
from tidings.errors import TidingsError
from tidings.web.context import web_state
from tidings.web.ingest import read_body

log = logging.getLogger("tidings.web")
router = APIRouter(prefix="/websub/callback", include_in_schema=False)
#: how often ``tidings serve`` subscribes, renews and retries
CHECK_EVERY_S = 300.0


@router.get("/{source_id}")
async def verify(request: Request, source_id: str) -> Response:
    params = {k: v for k, v in request.query_params.items() if k.startswith("hub.")}
    challenge = await web_state(request).tidings.websub.verify(source_id, params)
    return PlainTextResponse(challenge)


@router.post("/{source_id}")
async def content(request: Request, source_id: str) -> Response:
    tid = web_state(request).tidings
    body = await read_body(request, tid.settings.http_max_bytes)
    signature = request.headers.get("x-hub-signature")
    if not tid.websub.signature_ok(source_id, body, signature):
        raise HTTPException(403, "unsigned, or not signed with this subscription's secret")
    pushed = await tid.websub.accept(source_id, body,
                                     request.headers.get("content-type", ""))
    web_state(request).changed()
    return JSONResponse({"found": pushed.found, "created": pushed.created,
                         "revised": pushed.revised}, status_code=202)


async def keep_subscribed(tidings: Tidings, stop: asyncio.Event) -> None:
    """Subscribe and renew every few minutes until ``stop`` (when public_url is set)."""
    if not tidings.settings.public_url:
        log.info("WebSub is off: set public_url so that hubs can reach this reader")
        return
    while not stop.is_set():
        try:
            done = await tidings.websub.maintain()
            for source_id, what in done.items():
                log.info("websub %s: %s", source_id, what)
        except TidingsError as exc:
            log.warning("websub: %s", exc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), CHECK_EVERY_S)
