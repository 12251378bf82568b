"""The proxied transport (direct requests go through ``net/h1.py``).

The fetcher hands each hop straight to a transport, without an httpx client:
nothing follows redirects behind its back (it follows them hop by hop,
re-checking each), no cookie jar carries state from one request to the next,
and the environment's proxy variables are ignored: routing is decided by the
settings alone, so nothing can route around the guard.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

from tidings.errors import ConfigError

#: the proxied transport's pool (every proxied request shares it)
LIMITS = httpx.Limits(max_connections=256, max_keepalive_connections=64, keepalive_expiry=30)


def proxy_transport(proxy_url: str) -> httpx.AsyncHTTPTransport:
    """A transport that sends everything through the egress proxy.

    The proxy itself is not checked: it is infrastructure the operator named.
    The fetcher checks each target host before a request goes this way.
    """
    try:
        return httpx.AsyncHTTPTransport(proxy=proxy_url, trust_env=False, limits=LIMITS)
    except (ValueError, httpx.InvalidURL) as exc:
        raise ConfigError(f"egress_proxy: cannot use {proxy_url!r} ({exc})") from exc


class ProxiedResponse:
    """An httpx response seen the way the fetcher sees ``h1.H1Response``."""

    def __init__(self, response: httpx.Response) -> None:
        self.status = response.status_code
        self.reason = response.reason_phrase
        self.headers = flat_headers(response.headers)
        self._response = response

    def aiter_raw(self) -> AsyncIterator[bytes]:
        return self._response.aiter_raw()

    async def aclose(self) -> None:
        await self._response.aclose()


def flat_headers(headers: httpx.Headers) -> dict[str, str]:
    """Lower-cased names, repeated headers joined by ", " (as ``h1`` does)."""
    flat: dict[str, str] = {}
    for name, value in headers.multi_items():
        key = name.lower()
        flat[key] = f"{flat[key]}, {value}" if key in flat else value
    return flat
