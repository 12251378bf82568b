"""The Fetcher: the one place tidings sends outbound HTTP requests (SPEC section 3).

A request is a series of hops (the first URL, then each redirect). Every hop
waits for a slot of its host (politeness), then spends from one time budget
that covers DNS, connecting, every redirect and the whole body; waiting for a
slot is not counted, so a busy host cannot time out requests that never
started. Share one Fetcher per process: the per-host limits live in it.
"""

from __future__ import annotations

import asyncio
import json as jsonlib
import ssl
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Protocol

import httpcore
import httpx

from tidings.errors import (
    BlockedAddressError,
    ConnectError,
    FetchError,
    FetchTimeoutError,
    HTTPStatusError,
    TooManyRedirectsError,
)
from tidings.net.addresses import allow_list_from_settings
from tidings.net.backend import AddressRefusedError, GuardedBackend, checked_addresses
from tidings.net.body import (
    ACCEPT_ENCODING,
    Body,
    BodyError,
    CapExceededError,
    read_capped,
    read_encoded,
    too_large,
    undecodable,
)
from tidings.net.politeness import HostLimiter, parse_retry_after
from tidings.net.pools import MAX_HOST_POOLS, HostPools
from tidings.net.resolver import ResolveError, Resolver, SystemResolver
from tidings.net.routing import uses_proxy
from tidings.net.transport import ProxiedResponse, proxy_transport
from tidings.net.types import Response
from tidings.settings import Settings

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_NO_BODY_STATUSES = frozenset({204, 304})
#: bytes of an unwanted body (an error page) read to keep its connection
_DRAIN_LIMIT = 65_536
_DRAIN_SECONDS = 0.5
_PRIVATE_HEADERS = ("authorization", "cookie", "proxy-authorization")
_TIMEOUT_PHASES = ("connect", "read", "write", "pool")
_FIXED_HEADERS = frozenset({"user-agent", "accept-encoding"})  # R-HTTP-7; what the reader decodes
#: what sockets and ``net/h1.py`` raise (httpcore's exception types)
_WIRE_ERRORS = (httpcore.NetworkError, httpcore.ProtocolError, httpcore.TimeoutException)


@dataclass
class _Budget:
    """Seconds left for one request; spent only while a hop actually runs."""

    total: float
    used: float = 0.0

    @asynccontextmanager
    async def spend(self) -> AsyncIterator[None]:
        """Raises TimeoutError when the budget runs out, inside the hop or before it.

        asyncio's own timeout, not anyio's: it cancels the task once, so the clean-up
        after the cancellation (closing the socket; httpx's own on the proxy path)
        runs to its end, and it costs a timer handle instead of a cancel scope.
        """
        remaining = self.total - self.used
        if remaining <= 0:
            raise TimeoutError
        start = time.monotonic()
        try:
            async with asyncio.timeout(remaining):
                yield
        finally:
            self.used += time.monotonic() - start


class _Wire(Protocol):
    """A response whose head was read (``h1.H1Response`` or ``ProxiedResponse``)."""

    status: int
    reason: str
    headers: dict[str, str]

    def aiter_raw(self) -> AsyncIterator[bytes]: ...
    async def aclose(self) -> None: ...


@dataclass
class _Hop:
    method: str
    url: httpx.URL
    headers: dict[str, str]
    json: Any = None


@dataclass
class _Answer:
    status: int
    reason: str
    headers: dict[str, str]
    content: bytes = b""
    encoding: str = ""  # of ``content``, when decoding was deferred
    location: str | None = None


@dataclass
class _Request:
    """What one ``fetch`` call asked for, carried through its hops."""

    url: str
    cap: int
    budget: _Budget
    proxy: bool | None
    raise_for_status: bool
    defer_decoding: bool = False
    redirects: list[str] = field(default_factory=list)
    current: str = ""  # the hop being sent, for error messages


class Fetcher:
    """Guarded, polite HTTP client; use one per process (``async with`` or ``aclose``).

    ``resolver`` replaces the system resolver (tests answer with private or
    changing addresses). ``network_backend`` is what opens sockets once the
    guard approved an address (tests pass one that records dials); ``tls``
    the context that verifies servers (tests trust their own CA).
    ``max_host_pools`` caps how many hosts keep a connection pool at once
    (see ``net/pools.py``).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        resolver: Resolver | None = None,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
        max_host_pools: int = MAX_HOST_POOLS,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.settings = settings
        self.allow = allow_list_from_settings(settings)
        self.limiter = HostLimiter(settings.per_host_concurrency, settings.per_host_delay)
        self._resolver = resolver or SystemResolver()
        self._backend = GuardedBackend(self._resolver, self.allow, network_backend)
        self.pools = HostPools(
            self._backend, connections=self.limiter.concurrency, max_hosts=max_host_pools,
            tls=tls,
        )
        self._base_headers = {
            "accept": "*/*",
            "accept-encoding": ACCEPT_ENCODING,
            "user-agent": settings.user_agent,
        }
        self._proxy = proxy_transport(settings.egress_proxy) if settings.egress_proxy else None

    @property
    def connections_opened(self) -> int:
        """Direct connections dialed so far (after the guard approved them)."""
        return self._backend.connections_opened

    async def __aenter__(self) -> Fetcher:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.pools.aclose()
        if self._proxy is not None:
            await self._proxy.aclose()

    async def fetch(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        headers: Mapping[str, str] | None = None,
        max_bytes: int | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the whole request's budget
        referer: str | None = None,
        raise_for_status: bool = True,
        method: str = "GET",
        json: Any = None,
        proxy: bool | None = None,
        user_agent: str | None = None,
        defer_decoding: bool = False,
    ) -> Response:
        """Fetch ``url`` through the guard and return the final answer.

        304 comes back as a Response (``not_modified``); 4xx/5xx raise
        :class:`HTTPStatusError` unless ``raise_for_status`` is False. Every
        failure is a :class:`FetchError` whose message names the URL.
        A ``User-Agent`` in ``headers`` is ignored (R-HTTP-7); ``user_agent`` is
        the one way to replace it, for a source whose operator configured one
        explicitly (R-RSS-9). With ``defer_decoding`` a compressed body is kept
        as sent (capped at ``max_bytes`` too) and decoded when ``content`` is
        first read, which then raises the decoding errors.
        """
        request = _Request(
            url=url,
            cap=self.settings.http_max_bytes if max_bytes is None else max_bytes,
            budget=_Budget(self.settings.http_timeout if timeout is None else timeout),
            proxy=proxy,
            raise_for_status=raise_for_status,
            defer_decoding=defer_decoding,
        )
        sent = dict(self._base_headers)
        for name, value in (headers or {}).items():
            key = name.lower()
            if key not in _FIXED_HEADERS:
                sent[key] = value
        if etag:
            sent["if-none-match"] = etag
        if last_modified:
            sent["if-modified-since"] = last_modified
        if referer:
            sent["referer"] = referer
        if user_agent:
            sent["user-agent"] = user_agent
        try:
            hop = _Hop(method.upper(), _parse_url(url), sent, json)
            return await self._follow(request, hop)
        except FetchError:
            raise
        except Exception as exc:
            raise _translate(exc, request) from exc

    async def _follow(self, request: _Request, hop: _Hop) -> Response:
        seen = {str(hop.url)}
        limit = self.settings.http_max_redirects
        while True:
            answer = await self._send(request, hop)
            if answer.location is None:
                return self._finish(request, hop, answer)
            request.redirects.append(str(hop.url))
            target = _parse_url(str(hop.url.join(answer.location)))
            if len(request.redirects) > limit:
                raise TooManyRedirectsError(
                    request.url, f"{request.url}: more than {limit} redirects (next: {target})"
                )
            if str(target) in seen:
                raise TooManyRedirectsError(
                    request.url, f"{request.url}: redirect loop at {target}"
                )
            seen.add(str(target))
            hop = _next_hop(hop, target, answer.status)

    async def _send(self, request: _Request, hop: _Hop) -> _Answer:
        host = hop.url.host
        request.current = str(hop.url)
        proxy = self._proxy
        if proxy is not None and not uses_proxy(host, self.settings, request.proxy):
            proxy = None
        async with self.limiter.slot(host), request.budget.spend():
            seconds = request.budget.total - request.budget.used + 1
            if proxy is not None:  # the proxy resolves for us, so check the target here
                await checked_addresses(host, hop.url.port or _default_port(hop.url),
                                        self._resolver, self.allow)
                outgoing = httpx.Request(
                    hop.method, hop.url, headers=hop.headers, json=hop.json,
                    extensions={"timeout": dict.fromkeys(_TIMEOUT_PHASES, seconds)},
                )
                wire: _Wire = ProxiedResponse(await proxy.handle_async_request(outgoing))
                return await self._exchange(request, hop, wire)
            pool = await self.pools.acquire(host)
            try:
                headers, body = _payload(hop)
                wire = await pool.transport.send(hop.method, hop.url, headers, body, seconds)
                return await self._exchange(request, hop, wire)
            finally:
                self.pools.release(pool)

    async def _exchange(self, request: _Request, hop: _Hop, response: _Wire) -> _Answer:
        try:
            return await self._answer(request, hop, response)
        finally:
            await response.aclose()

    async def _answer(self, request: _Request, hop: _Hop, response: _Wire) -> _Answer:
        answer = _Answer(response.status, response.reason, response.headers)
        location = answer.headers.get("location")
        if answer.status in REDIRECT_STATUSES and location:
            answer.location = location
            return answer
        skip_body = (
            hop.method == "HEAD"
            or answer.status in _NO_BODY_STATUSES
            or (answer.status >= 400 and request.raise_for_status)
        )
        if not skip_body:
            encoding = answer.headers.get("content-encoding", "")
            if request.defer_decoding and encoding:
                answer.content = await read_encoded(response.aiter_raw(), encoding, request.cap)
                answer.encoding = encoding
            else:
                answer.content = await read_capped(response.aiter_raw(), encoding, request.cap)
        else:
            await _drain(response)
        return answer

    def _finish(self, request: _Request, hop: _Hop, answer: _Answer) -> Response:
        final = str(hop.url)
        now = datetime.now(UTC)
        if answer.status >= 400 and request.raise_for_status:
            retry_after = parse_retry_after(answer.headers.get("retry-after", ""), now)
            where = final if final == request.url else f"{request.url} (via {final})"
            raise HTTPStatusError(
                request.url,
                f"{where}: HTTP {answer.status} {answer.reason}".rstrip(),
                answer.status,
                retry_after,
            )
        return Response(
            url=request.url,
            final_url=final,
            status=answer.status,
            headers=answer.headers,
            body=Body(answer.content, answer.encoding, cap=request.cap, url=request.url),
            fetched_at=now,
            elapsed=request.budget.used,
            redirects=tuple(request.redirects),
        )


#: SPEC section 3 calls the one entry point ``guarded_fetch``: it is ``Fetcher.fetch``
guarded_fetch = Fetcher.fetch


def retry_after(resp: Response, now: datetime) -> datetime | None:
    """The instant a response's ``Retry-After`` asks for (for ``raise_for_status=False``)."""
    return parse_retry_after(resp.headers.get("retry-after", ""), now)


def _parse_url(url: str) -> httpx.URL:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise FetchError(url, f"{url}: not a valid URL ({exc})") from exc
    if parsed.scheme not in {"http", "https"}:
        raise BlockedAddressError(url, f"{url}: refused: only http and https URLs are fetched")
    if not parsed.host:
        raise FetchError(url, f"{url}: not a valid URL (no host)")
    return parsed


def _default_port(url: httpx.URL) -> int:
    return 443 if url.scheme == "https" else 80


def _payload(hop: _Hop) -> tuple[dict[str, str], bytes | None]:
    """Headers and body of a direct request (a JSON document, as httpx would send it)."""
    if hop.json is None:
        return hop.headers, None
    body = jsonlib.dumps(hop.json, ensure_ascii=False, separators=(",", ":"),
                         allow_nan=False).encode("utf-8")
    return {"content-type": "application/json", **hop.headers}, body


def _next_hop(hop: _Hop, target: httpx.URL, status: int) -> _Hop:
    """The request a redirect asks for: 303 (and 301/302 after POST) become GET."""
    method, body = hop.method, hop.json
    if (status == 303 and method != "HEAD") or (status in {301, 302} and method == "POST"):
        method, body = "GET", None
    headers = dict(hop.headers)
    if (target.scheme, target.host, target.port) != (hop.url.scheme, hop.url.host, hop.url.port):
        for name in _PRIVATE_HEADERS:
            headers.pop(name, None)
    return _Hop(method, target, headers, body)


async def _drain(response: _Wire) -> None:
    """Read an unwanted body to its end, if it is small, so the connection is reused.

    A connection goes back to its pool only once the response was read through
    (a 304 or a HEAD answer has nothing to read and is back at once). A large or
    slow error page is not worth the wait (nor a failed read worth hiding the
    status behind): the connection is dropped instead.
    """
    size = 0
    try:
        async with asyncio.timeout(_DRAIN_SECONDS):
            async for chunk in response.aiter_raw():
                size += len(chunk)
                if size > _DRAIN_LIMIT:
                    return
    except (TimeoutError, httpx.HTTPError, *_WIRE_ERRORS):
        return


def _translate(exc: Exception, request: _Request) -> FetchError:
    """Any failure below the fetcher as one line a user can act on."""
    url = request.url
    if isinstance(exc, AddressRefusedError):
        where = url if request.current in {"", url} else f"{url} (redirected to {request.current})"
        return BlockedAddressError(url, f"{where}: refused: {exc}")
    if isinstance(exc, TimeoutError | httpx.TimeoutException | httpcore.TimeoutException):
        return FetchTimeoutError(
            url,
            f"{url}: no complete answer within {request.budget.total:g} s "
            "(DNS, redirects and body together)",
        )
    if isinstance(exc, CapExceededError):
        return too_large(url, request.cap)
    if isinstance(exc, ResolveError):
        return ConnectError(url, f"{url}: {exc}")
    if isinstance(exc, BodyError):
        return undecodable(url, exc)
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return FetchError(url, f"{url}: not a valid URL ({exc})")
    if isinstance(exc, httpcore.LocalProtocolError):
        return FetchError(url, f"{url}: cannot send the request ({exc})")
    if isinstance(exc, httpx.HTTPError | httpcore.NetworkError | httpcore.ProtocolError):
        detail = str(exc) or type(exc).__name__
        return ConnectError(url, f"{url}: connection failed ({detail})")
    raise exc
