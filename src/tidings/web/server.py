"""The web application, and ``serve``: scheduler + reader in one process.

Every response passes :class:`Guard`, which adds the security headers (a strict
Content-Security-Policy: no inline script or style anywhere) and, while no
admin password exists, turns away every client that is not this machine, and
every request whose Host is not a loopback name (so a web page cannot reach
the reader through DNS rebinding either). Before the first request it takes
over an older install's ``web-auth.json``: until then the access mode is not
known.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import logging
import signal
from pathlib import Path
from types import FrameType
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tidings.app import Tidings, listen_socket
from tidings.errors import ConfigError, NotFoundError, StorageError, TidingsError
from tidings.settings import VERSION, Settings
from tidings.web import (
    api,
    api_sources,
    feeds_out,
    fever,
    greader,
    ingest,
    media,
    pages_collect,
    pages_explore,
    pages_items,
    pages_preview,
    pages_read,
    pages_site,
    pages_sources,
    pages_stories,
    websub,
)
from tidings.web.access import import_legacy, password_set
from tidings.web.auth import host_header_name, is_loopback
from tidings.web.context import LoginRequired, keep_alive, login_redirect, render
from tidings.web.edge import control_characters
from tidings.web.state import WebState

log = logging.getLogger("tidings.web")
STATIC = Path(__file__).parent / "static"

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: http:; "
    "connect-src 'self'; manifest-src 'self'; worker-src 'self'; font-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), interest-cohort=()"),
]
OPEN_REFUSAL = (
    "tidings: no admin password is set, so only this machine may use this reader; "
    "set one with `tidings set-password` (or TIDINGS_ADMIN_PASSWORD)\n"
)


class Guard:
    """Security headers on every response; loopback-only while there is no password."""

    def __init__(self, app: ASGIApp, state: WebState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            await self.state.ready()
        except TidingsError as exc:  # e.g. an unreadable auth file of an older version
            log.error("%s", exc)
            await Response(f"tidings: {exc}\n", status_code=503, media_type="text/plain",
                           headers={"Content-Security-Policy": CSP})(scope, receive, send)
            return
        refusal = _malformed(scope)
        if refusal is None and self.state.mode == "open":
            refusal = self._refuse(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", CSP.encode()))
                headers.extend(h for h in _HEADERS if h[0] not in names)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)

    def _refuse(self, scope: Scope) -> Response | None:
        client = scope.get("client")
        if not client or not is_loopback(client[0]):
            return Response(OPEN_REFUSAL, status_code=403, media_type="text/plain",
                            headers={"Content-Security-Policy": CSP})
        host = _host(scope)
        if host and not is_loopback(host_header_name(host)):
            return Response("tidings: without a password only loopback host names are "
                            "served (use http://127.0.0.1:PORT/)\n", status_code=421,
                            media_type="text/plain", headers={"Content-Security-Policy": CSP})
        return None


def _host(scope: Scope) -> str:
    return str(dict(scope.get("headers", [])).get(b"host", b"").decode("latin-1"))


def _malformed(scope: Scope) -> Response | None:
    """A Host header that is not a plain name[:port] (421), or control characters in the
    path or query (400: see ``tidings.web.edge``). JSON for the API, one line otherwise."""
    host = _host(scope)
    if host and host_header_name(host) is None:
        return _refusal(scope, 421, "malformed Host header")
    if control_characters(scope.get("path", ""), scope.get("query_string", b"")):
        return _refusal(scope, 400, "control characters are not allowed in the address")
    return None


def _refusal(scope: Scope, status: int, message: str) -> Response:
    headers = {"Content-Security-Policy": CSP}
    if str(scope.get("path", "")).startswith("/api/"):
        return JSONResponse({"detail": message}, status_code=status, headers=headers)
    return Response(f"tidings: {message}\n", status_code=status, media_type="text/plain",
                    headers=headers)


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def _error(request: Request, status: int, message: str) -> Response:
    if _wants_json(request):
        return JSONResponse({"detail": message}, status_code=status)
    try:
        return render(request, "error.html", {"title": f"Error {status}", "status": status,
                                              "message": message}, status=status)
    except HTTPException:  # e.g. a bad token while rendering: answer plainly
        return JSONResponse({"detail": message}, status_code=status)


def _install_handlers(app: FastAPI) -> None:
    @app.exception_handler(LoginRequired)
    async def login_required(request: Request, exc: LoginRequired) -> Response:
        return login_redirect(request)

    @app.exception_handler(api.Unauthorized)
    async def unauthorized(request: Request, exc: api.Unauthorized) -> Response:
        return JSONResponse({"detail": "log in or pass an API token (Authorization: Bearer)"},
                            status_code=401, headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(NotFoundError)
    async def not_found(request: Request, exc: NotFoundError) -> Response:
        return _error(request, 404, str(exc))

    @app.exception_handler(ConfigError)
    async def bad_request(request: Request, exc: ConfigError) -> Response:
        return _error(request, 400, str(exc))

    @app.exception_handler(StorageError)
    async def storage_failed(request: Request, exc: StorageError) -> Response:
        # the database's own words may describe the schema or the query: logged only
        log.error("%s %s: %s", request.method, request.url.path, exc)
        return _error(request, 503, "the archive could not answer this request; "
                                    "the server log says why")

    @app.exception_handler(TidingsError)
    async def failed(request: Request, exc: TidingsError) -> Response:
        log.warning("%s %s: %s", request.method, request.url.path, exc)
        return _error(request, 503, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        response = _error(request, exc.status_code, str(exc.detail))
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        if _wants_json(request):
            return JSONResponse({"detail": _plain(exc.errors())}, status_code=422)
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return _error(request, 400, f"{where}: {first.get('msg', 'invalid')}")


def _plain(errors: Any) -> Any:
    """Validation errors without the echoed input (it may be bytes or huge)."""
    return [{"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")),
             "type": str(e.get("type", ""))} for e in errors]


def create_app(tidings: Tidings, settings: Settings, *, page_ttl: float = 2.0) -> ASGIApp:
    """The reader + JSON API for one open archive (the caller owns ``tidings``)."""
    state = WebState(tidings, settings, page_ttl=page_ttl)
    app = FastAPI(title="tidings", version=VERSION, docs_url=None, redoc_url=None,
                  openapi_url="/api/openapi.json", dependencies=[Depends(keep_alive)],
                  description="The tidings JSON API. Authenticate with "
                              "`Authorization: Bearer <token>` (see the settings page).")
    app.state.web = state
    _install_handlers(app)
    app.include_router(api.router)
    app.include_router(api_sources.router)
    app.include_router(ingest.router)
    app.include_router(feeds_out.router)
    app.include_router(greader.router)
    app.include_router(fever.router)
    app.include_router(websub.router)
    app.include_router(pages_read.router)
    app.include_router(pages_sources.router)
    app.include_router(pages_preview.router)
    app.include_router(pages_collect.router)
    app.include_router(pages_items.router)
    app.include_router(pages_site.router)
    app.include_router(pages_explore.router)
    app.include_router(media.router)
    app.include_router(pages_stories.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return Guard(app, state)


# --------------------------------------------------------------------- serving


def settle_heap() -> None:
    """Take what start-up built (modules, routes, templates, the open archive: some
    140,000 objects) out of the collector's sight once it is ready to serve. It lives
    as long as the process, and each full collection would walk all of it again: 100+
    ms of CPU that fell on whichever request set it off (docs/benchmarks.md, issue 19).
    """
    gc.collect()
    gc.freeze()
    _steady_malloc()


#: glibc's ``mallopt`` parameters, and what they are set to: blocks below 8 MB come
#: from the heap, and up to 32 MB freed at its top is kept for the next request
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_AT, _TRIM_AT = 8 << 20, 32 << 20


def _steady_malloc() -> None:
    """Keep answers of a few megabytes (a Google Reader page, a feed, an export) in
    the heap. By default glibc maps each block over 128 KB anew (raising that bar only
    to the largest block freed so far) and gives memory back as soon as twice that is
    free at the heap's top: each answer then paid a page fault per 4 KB it wrote,
    milliseconds of system time a page on a virtual machine (docs/benchmarks.md, issue
    19). glibc's own moving limits go as high as 32 and 64 MB, so this keeps no more
    than it might. Does nothing where there is no glibc ``mallopt``.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    mallopt(_M_MMAP_THRESHOLD, _MMAP_AT)
    mallopt(_M_TRIM_THRESHOLD, _TRIM_AT)


def check_listen(tidings: Tidings, host: str) -> None:
    """Refuse to listen beyond loopback while nobody could log in."""
    if is_loopback(host) or password_set(tidings):
        return
    raise ConfigError(
        f"refusing to listen on {host}: no admin password is set, so anyone who can reach "
        "it could read and change the archive; run `tidings set-password` (or set "
        "TIDINGS_ADMIN_PASSWORD) first, or listen on 127.0.0.1"
    )


def proxy_options(settings: Settings) -> dict[str, Any]:
    """uvicorn believes X-Forwarded-For only from ``trusted_proxies`` (its own default
    trusts 127.0.0.1: every local client could then pick the address the login
    lockout counts against)."""
    trusted = list(settings.trusted_proxies)
    return {"proxy_headers": bool(trusted), "forwarded_allow_ips": trusted or None}


def serve(settings: Settings, *, host: str | None = None, port: int | None = None,
          collect: bool = True) -> None:
    """Run the reader, and the scheduler unless ``collect`` is False (a reader of a
    cluster, whose workers collect), until interrupted."""
    import uvicorn

    host = host or settings.host
    port = port if port is not None else settings.port
    tidings = Tidings.open(settings)
    try:
        asyncio.run(import_legacy(tidings))  # an older install's password counts below
        check_listen(tidings, host)
    except BaseException:
        tidings.close()
        raise
    try:
        sock = listen_socket(host, port)  # before the scheduler: a busy port costs nothing
    except BaseException:
        tidings.close()
        raise
    app = create_app(tidings, settings)
    settle_heap()
    config = uvicorn.Config(app, host=host, port=port, log_level="info", server_header=False,
                            **proxy_options(settings))
    server = _server(config)
    log.info("the reader is on http://%s:%d/ (Ctrl-C stops it)", host, port)
    log.info("%s", "collecting on a schedule" if collect
             else "not collecting (--no-collect): the cluster's workers collect")
    with sock:
        asyncio.run(_run(server, tidings, sock) if collect else _read_only(server, tidings, sock))
    if server.interrupted:
        # uvicorn hands the Ctrl-C on to asyncio, which raises it only when the main
        # task was still running then: a shutdown that finished first returned as if
        # nothing happened, exit 0 instead of the documented 130
        raise KeyboardInterrupt


def _server(config: Any) -> Any:
    """A uvicorn server that remembers whether Ctrl-C stopped it."""
    import uvicorn

    class Server(uvicorn.Server):
        interrupted = False

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            self.interrupted = self.interrupted or sig == signal.SIGINT
            super().handle_exit(sig, frame)

    return Server(config)


async def _read_only(server: Any, tidings: Tidings, sock: Any) -> None:
    """Serve without collecting (``serve --no-collect``): uvicorn owns the signals."""
    try:
        await server.serve(sockets=[sock])
    finally:
        await tidings.aclose()


async def _run(server: Any, tidings: Tidings, sock: Any) -> None:
    """Serve and schedule side by side; whichever ends first winds the other down.

    uvicorn owns SIGTERM/SIGINT: when it stops serving, the scheduler is asked to
    finish or abandon its in-flight fetches (bounded) and release every source.
    When the scheduler stops first (the memory watchdog), the server is stopped
    and the process restarts itself (R-OPS-4).
    """
    stop = asyncio.Event()
    scheduler = asyncio.create_task(tidings.serve_scheduler(signals=False, stop=stop))
    web = asyncio.create_task(server.serve(sockets=[sock]))
    hubs = asyncio.create_task(websub.keep_subscribed(tidings, stop))
    await asyncio.wait({scheduler, web}, return_when=asyncio.FIRST_COMPLETED)
    stop.set()
    server.should_exit = True
    await asyncio.gather(web, hubs, return_exceptions=True)
    reason = await scheduler
    await tidings.aclose()
    if reason == "memory":
        log.warning("memory limit reached: restarting")
        tidings.restart()
