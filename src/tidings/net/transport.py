"""Transports: per-host direct ones (guarded at connect time) and the proxied one.

The fetcher hands each hop straight to a transport, without an httpx client:
nothing follows redirects behind its back (it follows them hop by hop,
re-checking each), no cookie jar carries state from one request to the next,
and the environment's proxy variables are ignored: routing is decided by the
settings alone, so nothing can route around the guard.
"""

from __future__ import annotations

import ssl

import httpcore
import httpx

from tidings.errors import ConfigError

#: the proxied transport's pool (every proxied request shares it)
LIMITS = httpx.Limits(max_connections=256, max_keepalive_connections=64, keepalive_expiry=30)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with a connection pool that dials through ``backend``.

    The Fetcher keeps one per host (``net/pools.py``), all sharing one TLS context.
    """

    def __init__(
        self,
        backend: httpcore.AsyncNetworkBackend,
        limits: httpx.Limits,
        ssl_context: ssl.SSLContext,
    ) -> None:
        super().__init__(verify=ssl_context, trust_env=False, limits=limits)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=False,
            network_backend=backend,
        )


def proxy_transport(proxy_url: str) -> httpx.AsyncHTTPTransport:
    """A transport that sends everything through the egress proxy.

    The proxy itself is not checked: it is infrastructure the operator named.
    The fetcher checks each target host before a request goes this way.
    """
    try:
        return httpx.AsyncHTTPTransport(proxy=proxy_url, trust_env=False, limits=LIMITS)
    except (ValueError, httpx.InvalidURL) as exc:
        raise ConfigError(f"egress_proxy: cannot use {proxy_url!r} ({exc})") from exc
