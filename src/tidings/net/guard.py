"""The connect-time check: aiohttp dials only addresses the guard checked (R-HTTP-1).

aiohttp's connector does two things on a new connection that the guard hooks:

- it asks a resolver for the host's addresses. :class:`GuardedResolver`
  resolves **once** through tidings' injectable :class:`Resolver`, refuses local
  names and refuses the host when *any* answer may not be dialed (public and
  private answers mixed is the shape of a rebinding attack), and returns
  exactly the checked addresses, numeric, so nothing looks the name up again;
- it makes a socket for each address it is about to connect.
  :meth:`Guard.socket_factory` sees that address and refuses it unless the
  resolver approved it for this very request, or, for a URL written as an IP
  address (aiohttp skips the resolver for those), unless the address itself
  may be dialed. That is the check on the address actually dialed.

Which request a connection is for travels in a context variable the Fetcher
sets around each hop: aiohttp connects inside the task that sends the request
(its happy-eyeballs tasks copy the context), so the resolver and the factory
see the hop's host and approvals, and a socket made outside any hop is refused.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from aiohttp.abc import AbstractResolver, ResolveResult

from tidings.net.addresses import (
    AllowList,
    IPAddress,
    address_refusal,
    is_local_name,
    parse_address,
)
from tidings.net.resolver import Resolver

_HINT = "add the host to TIDINGS_ALLOW_PRIVATE_HOSTS to allow it"

#: called with (address, port) once the guard approved a dial, before connecting;
#: may raise OSError to fail it (tests record dials and reach only loopback)
DialHook = Callable[[str, int], None]


class AddressRefusedError(OSError):
    """The guard refused a host or address; carries a one-line reason.

    An OSError, so that aiohttp passes it on (wrapped in its connector error)
    from wherever in the connect it was raised.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"{reason} ({_HINT})")
        self.reason = reason


@dataclass(slots=True)
class HopCheck:
    """The request being sent: its host and the addresses approved for it."""

    host: str
    approved: set[IPAddress] = field(default_factory=set)


#: the hop whose connection aiohttp may be opening (set by the Fetcher)
CURRENT_HOP: ContextVar[HopCheck] = ContextVar("tidings_hop")


#: address verdicts a guard remembers (the same CDN and hosting addresses recur); past
#: this many it forgets them all and starts again
_VERDICTS = 4096


class Guard:
    """The resolver and socket factory of the direct connector, and what they let through."""

    def __init__(self, resolver: Resolver, allow: AllowList,
                 dial_hook: DialHook | None = None) -> None:
        self.resolver = resolver
        self.allow = allow
        self._dial_hook = dial_hook
        #: dials the guard let through so far (observability; tests assert on it)
        self.connections_opened = 0
        self._verdicts: dict[IPAddress, str | None] = {}

    async def checked(self, host: str, port: int) -> list[IPAddress]:
        """Resolve ``host`` once and return its addresses if every one may be dialed.

        One bad answer refuses them all: a name that resolves to both public and
        private addresses is the shape of a rebinding attack, not a mirror. A name
        on the allow-list may resolve to anything that is an address.
        """
        literal = parse_address(host)
        if literal is not None:
            refusal = self.refusal(literal)
            if refusal:
                raise AddressRefusedError(refusal)
            return [literal]
        named = self.allow.allows_name(host)
        if not named and is_local_name(host):
            raise AddressRefusedError(f"{host} is a local host name")
        addresses: list[IPAddress] = []
        for text in await self.resolver.resolve(host, port):
            ip = parse_address(text)
            if ip is None:
                raise AddressRefusedError(f"{host} resolved to {text!r}, which is not an address")
            refusal = None if named else self.refusal(ip)
            if refusal:
                raise AddressRefusedError(f"{host} -> {refusal}")
            addresses.append(ip)
        return addresses

    def refusal(self, ip: IPAddress) -> str | None:
        """:func:`address_refusal` under this guard's allow-list, remembered per address."""
        verdicts = self._verdicts
        try:
            return verdicts[ip]
        except KeyError:
            pass
        if len(verdicts) >= _VERDICTS:
            verdicts.clear()
        verdict = verdicts[ip] = address_refusal(ip, self.allow)
        return verdict

    def socket_factory(self, addr_info: Any) -> socket.socket:
        """aiohttp's hook for the address it is about to connect: refuse or make the socket."""
        family, kind, proto, _, sockaddr = addr_info
        host, port = str(sockaddr[0]), int(sockaddr[1])
        refusal = self._dial_refusal(host)
        if refusal:
            raise AddressRefusedError(refusal)
        if self._dial_hook is not None:
            self._dial_hook(host, port)
        self.connections_opened += 1
        return socket.socket(family, kind, proto)

    def _dial_refusal(self, address: str) -> str | None:
        hop = CURRENT_HOP.get(None)
        if hop is None:
            return f"{address}: no guarded request is being sent"
        ip = parse_address(address)
        if ip is None:
            return f"{address!r} is not an address"
        if ip in hop.approved:
            return None
        if parse_address(hop.host) != ip:  # not the hop's own IP literal either
            return f"{hop.host} -> {ip} was not checked"
        return self.refusal(ip)


class GuardedResolver(AbstractResolver):
    """aiohttp's resolver for the direct connector: resolve once, check, approve."""

    def __init__(self, guard: Guard) -> None:
        self._guard = guard

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        hop = CURRENT_HOP.get(None)
        if hop is None:
            raise AddressRefusedError(f"{host}: no guarded request is being sent")
        addresses = await self._guard.checked(host, port)
        hop.approved.update(addresses)
        return [_result(host, ip, port) for ip in addresses]

    async def close(self) -> None:
        return None


class ProxyResolver(AbstractResolver):
    """The proxied connector's resolver: it resolves the proxy's own name and nothing else.

    Every request of that connector names the proxy, so the proxy is all it
    dials; its address is not checked (the operator named it).
    """

    def __init__(self, proxy_host: str, resolver: Resolver) -> None:
        self._host = proxy_host.lower().rstrip(".")
        self._resolver = resolver

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if host.lower().rstrip(".") != self._host:
            raise AddressRefusedError(f"{host} is not the egress proxy")
        results: list[ResolveResult] = []
        for text in await self._resolver.resolve(host, port):
            ip = parse_address(text)
            if ip is not None:
                results.append(_result(host, ip, port))
        return results

    async def close(self) -> None:
        return None


def _result(host: str, ip: IPAddress, port: int) -> ResolveResult:
    return ResolveResult(
        hostname=host, host=str(ip), port=port,
        family=socket.AF_INET6 if ip.version == 6 else socket.AF_INET,
        proto=0, flags=socket.AI_NUMERICHOST,
    )
