"""Host name resolution for the guard.

The guard resolves names itself, once per connection, and dials the address it
checked; the resolver is injectable so tests can return private or changing
answers (DNS rebinding) without touching a real network.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Protocol


class ResolveError(Exception):
    """A name did not resolve; turned into :class:`tidings.errors.ConnectError`."""


class Resolver(Protocol):
    """Turns a host name into the addresses to try, in order of preference."""

    async def resolve(self, host: str, port: int) -> list[str]:
        """Addresses as text (``"93.184.216.34"``, ``"2001:db8::1"``); never empty.

        Raises :class:`ResolveError` when the name does not resolve.
        """
        ...


class SystemResolver:
    """The operating system's resolver (``getaddrinfo``) run off the event loop."""

    async def resolve(self, host: str, port: int) -> list[str]:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise ResolveError(f"cannot resolve {host} ({exc})") from exc
        addresses: list[str] = []
        for _family, _type, _proto, _name, sockaddr in infos:
            address = str(sockaddr[0])
            if address not in addresses:
                addresses.append(address)
        if not addresses:
            raise ResolveError(f"cannot resolve {host} (no addresses)")
        return addresses
