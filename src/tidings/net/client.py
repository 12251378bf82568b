"""The Fetcher: the one place tidings sends outbound HTTP requests (SPEC section 3).

A request is a series of hops (the first URL, then each redirect). Every hop
waits for a slot of its host (politeness), then spends from one time budget
that covers DNS, connecting, every redirect and the whole body; waiting for a
slot is not counted, so a busy host cannot time out requests that never
started. Share one Fetcher per process: the per-host limits live in it.
"""

from __future__ import annotations

import asyncio
import copy
import json as jsonlib
import re
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Any
from urllib.parse import urlencode

import aiohttp
from yarl import URL

from tidings.errors import (
    BlockedAddressError,
    ConnectError,
    FetchError,
    FetchTimeoutError,
    HTTPStatusError,
    TooManyRedirectsError,
)
from tidings.net.addresses import allow_list_from_settings
from tidings.net.body import (
    ACCEPT_ENCODING,
    Body,
    BodyError,
    CapExceededError,
    too_large,
    undecodable,
)
from tidings.net.guard import (
    CURRENT_HOP,
    AddressRefusedError,
    DialHook,
    Guard,
    HopCheck,
)
from tidings.net.politeness import HostLimiter, parse_retry_after
from tidings.net.resolver import ResolveError, Resolver, SystemResolver
from tidings.net.routing import uses_proxy
from tidings.net.types import Response
from tidings.net.wire import (
    KEEPALIVE,
    Sessions,
    describe,
    drain,
    finish,
    flat_headers,
    proxy_url,
    read_body,
)
from tidings.settings import Settings

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_NO_BODY_STATUSES = frozenset({204, 304})
_PRIVATE_HEADERS = ("authorization", "cookie", "proxy-authorization")
#: not taken from callers' headers: the User-Agent (R-HTTP-7), the encodings the body
#: reader decodes, and the framing, which is the wire's business
_OWN_HEADERS = frozenset({"user-agent", "accept-encoding", "host", "content-length",
                          "transfer-encoding", "connection"})
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: header names already found to be tokens (callers send the same few again and again)
_TOKENS: set[str] = set()
_MAX_TOKENS = 256


class UnexpectedAnswerError(Exception):
    """A well-formed answer the request cannot have (101 Switching Protocols)."""


@dataclass(slots=True)
class _Hop:
    method: str
    url: URL
    text: str  # ``url`` as a string, for messages and the redirect chain
    headers: dict[str, str]
    json: Any = None


@dataclass(frozen=True, slots=True)
class _Form:
    """A form body (``application/x-www-form-urlencoded``), e.g. a WebSub subscription."""

    fields: tuple[tuple[str, str], ...]


@dataclass(slots=True)
class _Answer:
    status: int
    reason: str
    headers: dict[str, str]
    content: bytes = b""
    encoding: str = ""  # of ``content``, when decoding was deferred
    location: str | None = None


@dataclass(slots=True)
class _Request:
    """What one ``fetch`` call asked for, carried through its hops.

    ``budget`` seconds cover the whole request; ``used`` is what the hops spent of them
    so far (waiting for a host's slot does not count).
    """

    url: str
    cap: int
    budget: float
    proxy: bool | None
    raise_for_status: bool
    defer_decoding: bool = False
    redirects: list[str] = field(default_factory=list)
    current: str = ""  # the hop being sent, for error messages
    used: float = 0.0


class Fetcher:
    """Guarded, polite HTTP client; use one per process (``async with`` or ``aclose``).

    ``resolver`` replaces the system resolver for every name the Fetcher
    looks up, the egress proxy's included (tests answer with private or
    changing addresses). ``dial_hook`` is called with ``(address, port)`` for
    every connection the guard approved, just before it is dialed, and may
    raise OSError to fail it (tests record dials and reach only loopback);
    ``tls`` is the context that verifies servers (tests trust their own CA;
    by default the system's trust store). ``keepalive`` is how many seconds an
    idle connection is kept.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        resolver: Resolver | None = None,
        dial_hook: DialHook | None = None,
        tls: ssl.SSLContext | None = None,
        keepalive: float = KEEPALIVE,
    ) -> None:
        self.settings = settings
        self.allow = allow_list_from_settings(settings)
        self.limiter = HostLimiter(settings.per_host_concurrency, settings.per_host_delay)
        self._guard = Guard(resolver or SystemResolver(), self.allow, dial_hook)
        proxy = proxy_url(settings.egress_proxy) if settings.egress_proxy else None
        #: sent with every request unless it says otherwise (the sessions' own headers,
        #: so that a request passes aiohttp only what differs)
        base_headers = {
            "accept": "*/*",
            "accept-encoding": ACCEPT_ENCODING,
            "user-agent": settings.user_agent,
        }
        self._sessions = Sessions(self._guard, proxy=proxy, tls=tls, headers=base_headers,
                                  per_host=self.limiter.concurrency, keepalive=keepalive)

    @property
    def connections_opened(self) -> int:
        """Direct connections dialed so far (after the guard approved them)."""
        return self._guard.connections_opened

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
        await self._sessions.aclose()

    def with_keepalive(self, keepalive: float) -> Fetcher:
        """This Fetcher's guard, politeness limits and headers over connections of its own,
        kept idle ``keepalive`` seconds; ``aclose`` it when done (that closes only them).

        For a crawl: it asks each host for a few pages in a burst and never again, so
        the usual keep-alive would hold an idle socket for every host of the last half
        minute (thousands at a crawl's pace, past many systems' open-file limit)."""
        twin = copy.copy(self)
        twin._sessions = self._sessions.with_keepalive(keepalive)
        return twin

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
        form: Mapping[str, str] | None = None,
    ) -> Response:
        """Fetch ``url`` through the guard and return the final answer.

        304 comes back as a Response (``not_modified``); 4xx/5xx raise
        :class:`HTTPStatusError` unless ``raise_for_status`` is False. Every
        failure is a :class:`FetchError` whose message names the URL.
        A ``User-Agent`` in ``headers`` is ignored (R-HTTP-7); ``user_agent`` is
        the one way to replace it, for a source whose operator configured one
        explicitly (R-RSS-9). With ``defer_decoding`` a compressed body is kept
        as sent (capped at ``max_bytes`` too) and decoded when ``content`` is
        first read, which then raises the decoding errors. ``form`` sends a form body
        instead of ``json``.
        """
        request = _Request(
            url,
            self.settings.http_max_bytes if max_bytes is None else max_bytes,
            self.settings.http_timeout if timeout is None else timeout,
            proxy,
            raise_for_status,
            defer_decoding,
        )
        sent: dict[str, str] = {}  # on top of the sessions' own headers
        try:
            if headers:
                for name, value in headers.items():
                    key = name.lower()
                    if key not in _OWN_HEADERS:
                        sent[_checked_header(key, value)] = value
            for name, given in (("if-none-match", etag), ("if-modified-since", last_modified),
                                ("referer", referer), ("user-agent", user_agent)):
                if given:
                    sent[_checked_header(name, given)] = given
            parsed = _parse_url(url)
            body = _Form(tuple(form.items())) if form is not None else json
            hop = _Hop(method.upper(), parsed, str(parsed), sent, body)
            return await self._follow(request, hop)
        except FetchError:
            raise
        except Exception as exc:
            raise _translate(exc, request) from exc

    async def _follow(self, request: _Request, hop: _Hop) -> Response:
        seen = {hop.text}
        limit = self.settings.http_max_redirects
        while True:
            answer = await self._send(request, hop)
            if answer.location is None:
                return self._finish(request, hop, answer)
            request.redirects.append(hop.text)
            try:
                target = _parse_url(str(hop.url.join(URL(answer.location))))
            except (TypeError, ValueError) as exc:
                raise FetchError(request.url, f"{request.url}: redirected to a bad URL "
                                              f"{answer.location!r} ({exc})") from exc
            hop = _next_hop(hop, target, answer.status)
            if len(request.redirects) > limit:
                raise TooManyRedirectsError(
                    request.url, f"{request.url}: more than {limit} redirects (next: {hop.text})"
                )
            if hop.text in seen:
                raise TooManyRedirectsError(
                    request.url, f"{request.url}: redirect loop at {hop.text}"
                )
            seen.add(hop.text)

    async def _send(self, request: _Request, hop: _Hop) -> _Answer:
        """One hop: wait for the host's slot, then spend from the budget while it runs.

        The budget is asyncio's own timeout: it cancels the task once and the
        clean-up after the cancellation (aiohttp closing the connection) runs to
        its end. Waiting for the slot is not counted.
        """
        host = hop.url.raw_host or ""
        request.current = hop.text
        async with self.limiter.slot(host):
            remaining = request.budget - request.used
            if remaining <= 0:
                raise TimeoutError
            start = time.monotonic()
            try:
                async with asyncio.timeout(remaining):
                    return await self._exchange(request, hop, host)
            finally:
                request.used += time.monotonic() - start

    async def _exchange(self, request: _Request, hop: _Hop, host: str) -> _Answer:
        url = hop.url
        sessions = self._sessions
        proxied = sessions.proxy is not None and uses_proxy(
            url.host or host, self.settings, request.proxy)
        if proxied:  # the proxy resolves for us, so check the target here
            assert url.port is not None  # yarl knows the default ports of http and https
            await self._guard.checked(host, url.port)
        session = sessions.proxied() if proxied else sessions.direct()
        headers, body = _payload(hop)
        token = CURRENT_HOP.set(HopCheck(host))
        try:
            response = await session.request(
                hop.method, url, headers=headers, data=body, allow_redirects=False,
                proxy=sessions.proxy if proxied else None,
            )
        finally:
            CURRENT_HOP.reset(token)
        try:
            return await self._answer(request, hop, response)
        finally:
            finish(response)

    async def _answer(self, request: _Request, hop: _Hop,
                      response: aiohttp.ClientResponse) -> _Answer:
        if response.status < 200:  # 101: nobody asked to switch protocols
            raise UnexpectedAnswerError(f"unexpected interim answer {response.status}")
        answer = _Answer(response.status, response.reason or "",
                         flat_headers(response.raw_headers))
        location = answer.headers.get("location")
        if answer.status in REDIRECT_STATUSES and location:
            answer.location = location
        skip_body = (
            answer.location is not None
            or hop.method == "HEAD"
            or answer.status in _NO_BODY_STATUSES
            or (answer.status >= 400 and request.raise_for_status)
        )
        if skip_body:
            await drain(response)
            return answer
        encoding = answer.headers.get("content-encoding", "")
        keep = request.defer_decoding and bool(encoding)
        answer.content = await read_body(response, encoding, request.cap, keep=keep)
        answer.encoding = encoding if keep else ""
        return answer

    def _finish(self, request: _Request, hop: _Hop, answer: _Answer) -> Response:
        final = hop.text
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
            elapsed=request.used,
            redirects=tuple(request.redirects),
        )


#: SPEC section 3 calls the one entry point ``guarded_fetch``: it is ``Fetcher.fetch``
guarded_fetch = Fetcher.fetch


def retry_after(resp: Response, now: datetime) -> datetime | None:
    """The instant a response's ``Retry-After`` asks for (for ``raise_for_status=False``)."""
    return parse_retry_after(resp.headers.get("retry-after", ""), now)


def _parse_url(url: str) -> URL:
    try:
        parsed = URL(url)
    except (TypeError, ValueError) as exc:
        raise FetchError(url, f"{url}: not a valid URL ({exc})") from exc
    if parsed.scheme not in {"http", "https"}:
        raise BlockedAddressError(url, f"{url}: refused: only http and https URLs are fetched")
    if not parsed.raw_host:
        raise FetchError(url, f"{url}: not a valid URL (no host)")
    if parsed.raw_user is not None or parsed.raw_password is not None:
        parsed = parsed.with_user(None)  # credentials in a feed URL are not sent
    return parsed


def _checked_header(name: str, value: str) -> str:
    """``name``, unless the header would change the request's framing (header injection).

    aiohttp lets a name that is not a token through (a space, a colon), and
    refuses line breaks only while writing the head, once a connection has been
    dialed; checked here, such a request never opens one. (A method that is not
    a token aiohttp refuses before dialing.)
    """
    if name not in _TOKENS:
        if not _TOKEN.fullmatch(name):
            raise ValueError(f"header name {name!r} is not a token")
        if len(_TOKENS) < _MAX_TOKENS:
            _TOKENS.add(name)
    if "\r" in value or "\n" in value or "\0" in value:
        raise ValueError(f"header {name!r} holds a line break")
    return name


def _payload(hop: _Hop) -> tuple[dict[str, str], bytes | None]:
    """Headers and body of a request (a JSON document, compact UTF-8)."""
    if hop.json is None:
        return hop.headers, None
    if isinstance(hop.json, _Form):
        return ({"content-type": "application/x-www-form-urlencoded", **hop.headers},
                urlencode(hop.json.fields).encode())
    body = jsonlib.dumps(hop.json, ensure_ascii=False, separators=(",", ":"),
                         allow_nan=False).encode("utf-8")
    return {"content-type": "application/json", **hop.headers}, body


def _next_hop(hop: _Hop, target: URL, status: int) -> _Hop:
    """The request a redirect asks for: 303 (and 301/302 after POST) become GET."""
    method, body = hop.method, hop.json
    if (status == 303 and method != "HEAD") or (status in {301, 302} and method == "POST"):
        method, body = "GET", None
    headers = dict(hop.headers)
    if (target.scheme, target.raw_host, target.port) != (
            hop.url.scheme, hop.url.raw_host, hop.url.port):
        for name in _PRIVATE_HEADERS:
            headers.pop(name, None)
    return _Hop(method, target, str(target), headers, body)


def _refusal(exc: BaseException) -> AddressRefusedError | None:
    """The guard's refusal behind ``exc`` (aiohttp wraps what its connector raised)."""
    if isinstance(exc, aiohttp.ClientConnectorError):
        exc = exc.os_error
    return exc if isinstance(exc, AddressRefusedError) else None


def _translate(exc: Exception, request: _Request) -> FetchError:
    """Any failure below the fetcher as one line a user can act on."""
    url = request.url
    refused = _refusal(exc)
    if refused is not None:
        where = f"{url} (redirected to {request.current})" if request.redirects else url
        return BlockedAddressError(url, f"{where}: refused: {describe(refused)}")
    if isinstance(exc, TimeoutError):
        return FetchTimeoutError(
            url,
            f"{url}: no complete answer within {request.budget:g} s "
            "(DNS, redirects and body together)",
        )
    if isinstance(exc, CapExceededError):
        return too_large(url, request.cap)
    if isinstance(exc, ResolveError):
        return ConnectError(url, f"{url}: {exc}")
    if isinstance(exc, BodyError):
        return undecodable(url, exc)
    if isinstance(exc, aiohttp.InvalidURL):
        return FetchError(url, f"{url}: not a valid URL ({describe(exc)})")
    if isinstance(exc, aiohttp.ClientError | OSError | UnexpectedAnswerError):
        return ConnectError(url, f"{url}: connection failed ({describe(exc)})")
    if isinstance(exc, ValueError):  # a header or body that cannot be sent
        return FetchError(url, f"{url}: cannot send the request ({describe(exc)})")
    raise exc
