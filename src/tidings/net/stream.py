"""A network backend straight on asyncio's transports and protocols.

It keeps httpcore's backend interface (``net/h1.py`` reads and writes through
it, and tests pass their own dialers with the same interface), but not its
default for asyncio, which goes through anyio: every read and write opened a
cancel scope for its timeout and every attribute lookup walked a mapping. In a
round of a thousand small conditional requests that was half of the HTTP
client's CPU time (benchmarks/collect.py, profiled). This backend does reads of
at most N bytes, writes, the TLS upgrade and timeouts raised as httpcore's
exception types, and nothing more.
"""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore

#: stop reading from the socket while this much is buffered and unread
_HIGH_WATER = 1 << 20


class _Protocol(asyncio.Protocol):
    """Buffers what arrives and wakes the one reader (HTTP/1.1: one at a time)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self._reading: asyncio.Future[None] | None = None
        self._writing: asyncio.Future[None] | None = None
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > _HIGH_WATER and self.transport is not None:
            self.transport.pause_reading()
            self._paused = True
        self._wake_reader()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake_reader()
        return False  # close our side too: HTTP/1.1 has no use for a half-open socket

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake_reader()
        if self._writing is not None and not self._writing.done():
            self._writing.set_result(None)

    def pause_writing(self) -> None:
        self._writing = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._writing is not None and not self._writing.done():
            self._writing.set_result(None)
        self._writing = None

    def _wake_reader(self) -> None:
        if self._reading is not None and not self._reading.done():
            self._reading.set_result(None)

    async def readable(self) -> None:
        self._reading = asyncio.get_running_loop().create_future()
        try:
            await self._reading
        finally:
            self._reading = None

    def take(self, max_bytes: int) -> bytes:
        chunk = bytes(self.buffer[:max_bytes])
        del self.buffer[:max_bytes]
        if self._paused and len(self.buffer) <= _HIGH_WATER // 2 and self.transport is not None:
            self.transport.resume_reading()
            self._paused = False
        return chunk

    async def drained(self) -> None:
        if self._writing is not None:
            await self._writing


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection: httpcore's stream interface over a transport and its protocol."""

    def __init__(self, transport: asyncio.Transport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        p = self._protocol
        if not p.buffer and not p.eof:
            try:
                async with asyncio.timeout(timeout):
                    await p.readable()
            except TimeoutError as exc:
                raise httpcore.ReadTimeout(f"no data for {timeout} s") from exc
        if p.buffer:
            return p.take(max_bytes)
        if p.error is not None:
            raise httpcore.ReadError(str(p.error) or type(p.error).__name__)
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        if not buffer:
            return
        if self._transport.is_closing():
            raise httpcore.WriteError("connection closed")
        self._transport.write(buffer)
        try:
            async with asyncio.timeout(timeout):
                await self._protocol.drained()
        except TimeoutError as exc:
            raise httpcore.WriteTimeout(f"could not send for {timeout} s") from exc
        if self._protocol.error is not None:
            raise httpcore.WriteError(str(self._protocol.error))

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(
                    self._transport, self._protocol, ssl_context,
                    server_hostname=server_hostname)
        except TimeoutError as exc:
            self._transport.abort()
            raise httpcore.ConnectTimeout(f"TLS handshake took over {timeout} s") from exc
        except (OSError, ssl.SSLError) as exc:
            self._transport.abort()
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        if transport is None:  # pragma: no cover - only when the loop closes under us
            raise httpcore.ConnectError("connection closed during the TLS handshake")
        self._protocol.transport = transport  # pause and resume reading on the TLS layer
        return AsyncioStream(transport, self._protocol)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            sock = self._transport.get_extra_info("socket")
            return self._protocol.eof or bool(self._protocol.buffer) or (
                sock is not None and readable(sock))
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        return self._transport.get_extra_info(info)


def readable(sock: Any) -> bool:
    """Whether data or the server's close waits on an idle connection (the pool's probe
    that tells a connection the server dropped from one that can be reused)."""
    if sock.fileno() < 0:
        return True
    if not hasattr(select, "poll"):  # pragma: no cover - Windows
        return bool(select.select([sock], [], [], 0)[0])
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """Dials ``host`` as given: the guard in ``backend`` passes it a checked address."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for option in socket_options or ():
                sock.setsockopt(*option)
            if local_address:
                sock.bind((local_address, 0))
            async with asyncio.timeout(timeout):
                await loop.sock_connect(sock, (host, port))
                transport, protocol = await loop.create_connection(_Protocol, sock=sock)
        except TimeoutError as exc:
            sock.close()
            raise httpcore.ConnectTimeout(f"no connection within {timeout} s") from exc
        except OSError as exc:
            sock.close()
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        except BaseException:
            sock.close()
            raise
        return AsyncioStream(transport, protocol)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not dialed")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
