"""The wire: aiohttp sessions for direct and proxied requests (one library, one parser).

Two sessions, made on first use inside the running event loop (aiohttp binds
them to it) and closed by ``Fetcher.aclose``:

- **direct**: its connector resolves through the guard and makes every socket
  through the guard's factory (``net/guard.py``), so it dials only checked
  addresses;
- **proxied** (only with ``egress_proxy``): its connector dials the proxy the
  operator named (looked up by the guard's resolver), nothing else; the Fetcher
  checks each target host before a request goes this way.

Both are configured the same way: the Fetcher's own headers (a request names only
what it changes), no redirects followed (the Fetcher follows
them hop by hop, re-checking each), no cookie jar, no environment proxies or
netrc, no decompression (``net/body.py`` inflates under the byte cap), no
timeouts of aiohttp's own (the Fetcher's budget covers the whole request).

The helpers below are the Fetcher's view of an aiohttp response: flat headers,
the body read under the cap, an unwanted body drained so the connection is
kept, the connection given back or closed, aiohttp's errors in one line.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver
from yarl import URL

from tidings.errors import ConfigError
from tidings.net.body import (
    check_encoding,
    decode_capped,
    read_capped,
    read_encoded,
)
from tidings.net.guard import Guard, GuardedResolver, ProxyResolver

#: connections in use at once, all hosts together: a bound on sockets, far above
#: what a round asks for (its ``collect_concurrency``)
MAX_CONNECTIONS = 4096
#: seconds an idle keep-alive connection is kept
KEEPALIVE = 30.0
#: bytes of an unwanted body (an error page) read to keep its connection
_DRAIN_LIMIT = 65_536
_DRAIN_SECONDS = 0.5
#: a status line or one header may be this long (aiohttp's default is 8 KiB;
#: real sites send longer Content-Security-Policy and Set-Cookie headers)
MAX_FIELD = 64 * 1024


def proxy_url(text: str) -> URL:
    """The egress proxy's URL, or a ConfigError that says what is wrong with it."""
    try:
        url = URL(text.strip())
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"egress_proxy: cannot use {text!r} ({exc})") from exc
    if url.scheme not in {"http", "https"} or not url.raw_host:
        raise ConfigError(
            f"egress_proxy: cannot use {text!r} (expected http://host:port or https://host:port)"
        )
    return url


class Sessions:
    """The direct and the proxied session of one Fetcher."""

    def __init__(self, guard: Guard, *, proxy: URL | None, tls: ssl.SSLContext | None,
                 headers: Mapping[str, str], per_host: int,
                 keepalive: float = KEEPALIVE) -> None:
        self._guard = guard
        self.proxy = proxy
        self._headers = dict(headers)
        self._tls: ssl.SSLContext | bool = tls if tls is not None else True
        self._per_host = per_host
        self._keepalive = keepalive
        self._direct: aiohttp.ClientSession | None = None
        self._proxied: aiohttp.ClientSession | None = None

    def with_keepalive(self, keepalive: float) -> Sessions:
        """Sessions made the same way (guard, proxy, TLS, per-host cap) with connections
        of their own, kept idle ``keepalive`` seconds."""
        tls = self._tls if isinstance(self._tls, ssl.SSLContext) else None
        return Sessions(self._guard, proxy=self.proxy, tls=tls, headers=self._headers,
                        per_host=self._per_host, keepalive=keepalive)

    def direct(self) -> aiohttp.ClientSession:
        if self._direct is None:
            self._direct = self._session(
                GuardedResolver(self._guard), self._guard.socket_factory)
        return self._direct

    def proxied(self) -> aiohttp.ClientSession:
        assert self.proxy is not None and self.proxy.raw_host is not None
        if self._proxied is None:
            self._proxied = self._session(
                ProxyResolver(self.proxy.raw_host, self._guard.resolver), None)
        return self._proxied

    async def aclose(self) -> None:
        sessions = [s for s in (self._direct, self._proxied) if s is not None]
        self._direct = self._proxied = None
        for session in sessions:
            await session.close()
        if sessions:
            await asyncio.sleep(0)  # the transports close their sockets on the next turn

    def _session(self, resolver: AbstractResolver,
                 socket_factory: Callable[[Any], socket.socket] | None) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            resolver=resolver,
            socket_factory=socket_factory,
            use_dns_cache=False,  # one lookup per new connection, checked each time
            ssl=self._tls,
            keepalive_timeout=self._keepalive,
            limit=MAX_CONNECTIONS,
            limit_per_host=self._per_host,  # politeness caps a host at this already
        )
        return aiohttp.ClientSession(
            connector=connector,
            headers=self._headers,
            cookie_jar=aiohttp.DummyCookieJar(),
            auto_decompress=False,
            trust_env=False,
            timeout=aiohttp.ClientTimeout(),
            max_line_size=MAX_FIELD,
            max_field_size=MAX_FIELD,
        )


def flat_headers(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """Lower-cased names, repeated headers joined by ", "."""
    flat: dict[str, str] = {}
    names = _NAMES
    for name_b, value_b in raw:
        name = names.get(name_b)
        if name is None:
            name = name_b.decode("latin-1").lower()
            if len(names) < _MAX_NAMES:
                names[name_b] = name
        value = value_b.decode("latin-1")
        flat[name] = f"{flat[name]}, {value}" if name in flat else value
    return flat


#: header names as sent and lower-cased: servers send the same few dozen spellings
_NAMES: dict[bytes, str] = {}
_MAX_NAMES = 1024


def finish(response: aiohttp.ClientResponse) -> None:
    """Give the connection back if the body was read to its end, else close it.

    A connection whose answer was cut off (a timeout, the byte cap) is in an
    unknown state and must not serve the next request.
    """
    if response.content.is_eof():
        response.release()
    else:
        response.close()


async def read_body(response: aiohttp.ClientResponse, encoding: str, cap: int, *,
                     keep: bool) -> bytes:
    """The body under the cap: decoded, or as sent when ``keep`` (decoded later).

    A body whose Content-Length fits the cap is read in one go (the parser stops
    at that length) and, if compressed, inflated step by step under the cap;
    any other is streamed and stops the moment it passes the cap.
    """
    length = response.content_length
    if length is not None and length <= cap:
        data = await response.content.read()
        if not encoding:
            return data
        if keep:
            check_encoding(encoding)
            return data
        return decode_capped(data, encoding, cap)
    raw = response.content.iter_any()
    if keep:
        return await read_encoded(raw, encoding, cap)
    return await read_capped(raw, encoding, cap)


async def drain(response: aiohttp.ClientResponse) -> None:
    """Read an unwanted body to its end, if it is small, so the connection is reused.

    A connection goes back to the pool only once the response was read through
    (a 304 or a HEAD answer has nothing to read and is back at once). A large or
    slow error page is not worth the wait (nor a failed read worth hiding the
    status behind): the connection is dropped instead.
    """
    size = 0
    try:
        async with asyncio.timeout(_DRAIN_SECONDS):
            async for chunk in response.content.iter_any():
                size += len(chunk)
                if size > _DRAIN_LIMIT:
                    return
    except (TimeoutError, aiohttp.ClientError):
        return


def describe(exc: BaseException) -> str:
    """What went wrong, in one line: aiohttp's parser errors span several."""
    text = str(exc)
    if isinstance(exc, aiohttp.ClientResponseError):  # the parser's complaint, not a status
        text = exc.message
    elif isinstance(exc, aiohttp.ServerDisconnectedError) and not isinstance(exc.message, str):
        text = "server disconnected in the middle of the response"
    return " ".join(text.split())[:300] or type(exc).__name__
