"""The connect-time check: a network backend that dials only checked addresses.

A host's pool (``net/h1.py``) asks the backend for a TCP stream to ``(host,
port)``; the interface is httpcore's. This backend resolves ``host`` itself,
exactly once, refuses the connection when any candidate address is not allowed,
and then dials the checked address - never the name - so a DNS answer that
changes between check and connect (rebinding) cannot slip a private address in.
TLS still verifies and sends SNI for the host name because the pool passes the
name to ``start_tls``.
"""

from __future__ import annotations

from collections.abc import Iterable

import httpcore

from tidings.net.addresses import AllowList, address_refusal, name_refusal, parse_address
from tidings.net.resolver import Resolver
from tidings.net.stream import AsyncioBackend

_HINT = "add the host to TIDINGS_ALLOW_PRIVATE_HOSTS to allow it"


class AddressRefusedError(Exception):
    """The guard refused a host or address; carries a one-line reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"{reason} ({_HINT})")
        self.reason = reason


async def checked_addresses(
    host: str, port: int, resolver: Resolver, allow: AllowList
) -> list[str]:
    """Resolve ``host`` once and return its addresses if every one may be dialed.

    One bad answer refuses them all: a name that resolves to both public and
    private addresses is the shape of a rebinding attack, not a mirror.
    """
    refusal = name_refusal(host, allow)
    if refusal:
        raise AddressRefusedError(refusal)
    literal = parse_address(host)
    addresses = [str(literal)] if literal is not None else await resolver.resolve(host, port)
    if literal is None and allow.allows_name(host):
        return addresses
    for text in addresses:
        ip = parse_address(text)
        if ip is None:
            raise AddressRefusedError(f"{host} resolved to {text!r}, which is not an address")
        refusal = address_refusal(ip, allow)
        if refusal:
            raise AddressRefusedError(refusal if literal is not None else f"{host} -> {refusal}")
    return addresses


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolves, checks, then lets ``inner`` dial the checked address."""

    def __init__(
        self,
        resolver: Resolver,
        allow: AllowList,
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._resolver = resolver
        self._allow = allow
        self._inner = inner or AsyncioBackend()
        #: connections opened so far (observability; tests assert on it)
        self.connections_opened = 0

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await checked_addresses(host, port, self._resolver, self._allow)
        failures: list[str] = []
        for address in addresses:
            try:
                stream = await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except httpcore.ConnectError as exc:
                failures.append(f"{address}: {exc or type(exc).__name__}")
                continue
            self.connections_opened += 1
            return stream
        raise httpcore.ConnectError(f"cannot connect to {host}:{port} ({'; '.join(failures)})")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AddressRefusedError(f"unix socket {path} is not an outbound address")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
