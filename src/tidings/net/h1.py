"""HTTP/1.1 for the direct path: one request, one streamed response, kept-alive sockets.

httpcore's pool did this before, and in a conditional round (a thousand 304s)
its locks, shields, events and per-request objects plus h11's state machine
were most of the event loop's HTTP time. What a feed collector needs from
HTTP/1.1 is small: send a request, read the status and headers, stream the body
framed by Content-Length, chunks or the close, keep the socket when the
exchange ended cleanly. This module does that and nothing else (no pipelining,
no upgrades, no request bodies beyond one small JSON document).

Sockets come from the guarded backend (``net/backend.py``), which resolves and
checks every address before dialing, so nothing here can reach an address the
guard refused. Malformed answers raise :class:`ResponseError` with a one-line
reason; heads are capped at 64 KiB and every read has the caller's timeout.
"""

from __future__ import annotations

import re
import ssl
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import httpcore
import httpx

#: a response head (status line and headers) may be at most this long
MAX_HEAD = 64 * 1024
#: bytes asked of the socket per read (it returns what is buffered, up to this)
_READ = 256 * 1024
_MAX_LINE = 4096
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")
_DIGITS = re.compile(r"[0-9]{1,18}")
_NO_BODY = frozenset({204, 304})
#: framing is this module's business: callers' values for these are not sent
_OWN_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})


class ResponseError(httpcore.RemoteProtocolError):
    """The server's answer is not valid HTTP/1.x (or ended in the middle)."""


class RequestError(httpcore.LocalProtocolError):
    """The request cannot be written (a header with a line break, say)."""


class _UnansweredError(ResponseError):
    """The connection closed before a single byte of the answer: a reused
    keep-alive socket the server had dropped, safe to retry on a new one."""


class _Conn:
    """One socket and the bytes read from it but not consumed yet."""

    __slots__ = ("buffer", "idle_since", "stream")

    def __init__(self, stream: httpcore.AsyncNetworkStream) -> None:
        self.stream = stream
        self.buffer = bytearray()
        self.idle_since = 0.0

    async def fill(self, seconds: float) -> bool:
        """Read more into the buffer; False at the end of the stream."""
        data = await self.stream.read(_READ, seconds)
        if not data:
            return False
        self.buffer += data
        return True

    async def line(self, seconds: float, what: str) -> bytes:
        """The next line (without its line break), for chunk sizes and trailers."""
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end]).rstrip(b"\r")
                del self.buffer[:end + 1]
                return line
            if len(self.buffer) > _MAX_LINE:
                raise ResponseError(f"{what} line longer than {_MAX_LINE} bytes")
            if not await self.fill(seconds):
                raise ResponseError(f"connection closed in the middle of the {what}")

    async def close(self) -> None:
        await self.stream.aclose()


def request_bytes(method: str, url: httpx.URL, headers: Mapping[str, str],
                  body: bytes | None) -> bytes:
    """The request as sent: request line, Host first, the headers, then the body."""
    if not _TOKEN.fullmatch(method):
        raise RequestError(f"method {method!r} is not a token")
    lines = [method.encode("ascii") + b" " + url.raw_path + b" HTTP/1.1", b"host: " + url.netloc]
    for name, value in headers.items():
        if name.lower() in _OWN_HEADERS:
            continue
        if not _TOKEN.fullmatch(name):
            raise RequestError(f"header name {name!r} is not a token")
        if "\r" in value or "\n" in value or "\0" in value:
            raise RequestError(f"header {name!r} holds a line break")
        lines.append(name.encode("ascii") + b": " + value.encode("utf-8"))
    if body is not None:
        lines.append(b"content-length: %d" % len(body))
    return b"\r\n".join(lines) + b"\r\n\r\n" + (body or b"")


@dataclass(frozen=True, slots=True)
class Head:
    """Status line and headers of a response (names lower-cased, repeats joined by ", ")."""

    version: bytes
    status: int
    reason: str
    headers: dict[str, str]


async def read_head(conn: _Conn, seconds: float) -> Head:
    """The next final response head (1xx interim answers are skipped)."""
    while True:
        head = await _one_head(conn, seconds)
        if head.status >= 200:
            return head
        if head.status == 101:
            raise ResponseError("server switched protocols unasked (101)")


async def _one_head(conn: _Conn, seconds: float) -> Head:
    received = bool(conn.buffer)
    while True:
        while conn.buffer and conn.buffer[0] in b"\r\n":  # stray line breaks before a status
            del conn.buffer[:1]
        found = _HEAD_END.search(conn.buffer, 0, MAX_HEAD + 4)
        if found is not None:
            break
        if len(conn.buffer) > MAX_HEAD:
            raise ResponseError(f"response headers larger than {MAX_HEAD // 1024} KiB")
        if not await conn.fill(seconds):
            if received:
                raise ResponseError("connection closed in the middle of the response headers")
            raise _UnansweredError("server closed the connection without answering")
        received = True
    raw = bytes(conn.buffer[:found.start()])
    del conn.buffer[:found.end()]
    return parse_head(raw)


def parse_head(raw: bytes) -> Head:
    """Parse a head (everything before the empty line); strict where h11 was strict."""
    lines = raw.split(b"\n")
    parts = lines[0].rstrip(b"\r").split(b" ", 2)
    version = parts[0]
    if not version.startswith(b"HTTP/1.") or len(parts) < 2:
        raise ResponseError(f"not an HTTP/1 status line: {lines[0][:80]!r}")
    code = parts[1]
    if len(code) != 3 or not code.isdigit():
        raise ResponseError(f"bad status code {code[:20]!r}")
    reason = parts[2].decode("latin-1").strip() if len(parts) == 3 else ""
    headers: dict[str, str] = {}
    last = ""
    for raw_line in lines[1:]:
        line = raw_line.rstrip(b"\r")
        if line[:1] in (b" ", b"\t"):  # obsolete line folding: part of the previous value
            if not last:
                raise ResponseError("response headers start with a continuation line")
            headers[last] += " " + line.strip().decode("latin-1")
            continue
        name_b, sep, value_b = line.partition(b":")
        name = name_b.decode("latin-1").lower()
        if not sep or not _TOKEN.fullmatch(name):
            raise ResponseError(f"malformed header line {line[:80]!r}")
        value = value_b.strip(b" \t").decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
        last = name
    return Head(version, int(code), reason, headers)


class H1Response:
    """A response whose body is read on demand; the socket goes back when it ends cleanly."""

    def __init__(self, pool: H1Pool, conn: _Conn, origin: tuple[str, int], head: Head,
                 method: str, seconds: float) -> None:
        self.status = head.status
        self.reason = head.reason
        self.headers = head.headers
        self._pool = pool
        self._conn: _Conn | None = conn
        self._origin = origin
        self._seconds = seconds
        self._length, self._chunked, self._reusable = _framing(head, method)

    async def start(self) -> None:
        """Release the socket at once when the response has no body at all."""
        if self._length == 0 and not self._chunked:
            await self._done()

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body as sent (still compressed, say), chunk by chunk as it arrives."""
        conn = self._conn
        if conn is None:
            return
        if self._chunked:
            async for piece in self._read_chunked(conn):
                yield piece
        else:
            async for piece in self._read_length(conn, self._length):
                yield piece
        await self._done()

    async def aclose(self) -> None:
        """Drop the socket if the body was not read to its end (its state is unknown)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def _done(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._reusable and not conn.buffer:
            await self._pool.checkin(self._origin, conn)
        else:
            await conn.close()

    async def _read_length(self, conn: _Conn, length: int | None) -> AsyncIterator[bytes]:
        """``length`` bytes, or (None) everything until the server closes."""
        remaining = length
        while remaining is None or remaining > 0:
            if not conn.buffer and not await conn.fill(self._seconds):
                if remaining is None:
                    return
                raise ResponseError(f"connection closed {remaining} bytes before the body's end")
            take = len(conn.buffer) if remaining is None else min(remaining, len(conn.buffer))
            piece = bytes(conn.buffer[:take])
            del conn.buffer[:take]
            if remaining is not None:
                remaining -= take
            yield piece

    async def _read_chunked(self, conn: _Conn) -> AsyncIterator[bytes]:
        while True:
            size_text = (await conn.line(self._seconds, "chunk size")).split(b";", 1)[0].strip()
            if not _HEX.fullmatch(size_text):
                raise ResponseError(f"bad chunk size {size_text[:20]!r}")
            size = int(size_text, 16)
            if size == 0:
                trailers = 0
                while await conn.line(self._seconds, "trailer"):
                    trailers += 1
                    if trailers > 100:
                        raise ResponseError("more than 100 trailer lines")
                return
            async for piece in self._read_length(conn, size):
                yield piece
            if await conn.line(self._seconds, "chunk end"):
                raise ResponseError("chunk longer than its size")


def _framing(head: Head, method: str) -> tuple[int | None, bool, bool]:
    """(body length or None for "until close", chunked, socket reusable afterwards)."""
    headers = head.headers
    tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
    keep = "close" not in tokens if head.version == b"HTTP/1.1" else "keep-alive" in tokens
    if method == "HEAD" or head.status in _NO_BODY:
        return 0, False, keep
    coding = headers.get("transfer-encoding")
    if coding is not None:
        chunked = coding.rsplit(",", 1)[-1].strip().lower() == "chunked"
        # with a Content-Length too, the message is suspect: read it, then drop the socket
        return None, chunked, keep and chunked and "content-length" not in headers
    length = headers.get("content-length")
    if length is None:
        return None, False, False
    values = {v.strip() for v in length.split(",")}
    value = values.pop()
    if values or not _DIGITS.fullmatch(value):
        raise ResponseError(f"bad Content-Length {length[:40]!r}")
    return int(value), False, keep


class H1Pool:
    """Idle keep-alive sockets of one host (by scheme and port) and the exchanges on them.

    How many exchanges run at once is the politeness limiter's business; the pool
    keeps at most ``keep`` idle sockets per origin and drops those idle longer than
    ``idle_expiry`` seconds or readable while idle (the server closed them or sent
    something unasked).
    """

    def __init__(self, backend: httpcore.AsyncNetworkBackend, tls: ssl.SSLContext, *,
                 keep: int, idle_expiry: float) -> None:
        self._backend = backend
        self._tls = tls
        self._keep = max(1, keep)
        self._idle_expiry = idle_expiry
        self._idle: dict[tuple[str, int], list[_Conn]] = {}
        self._closed = False

    async def send(self, method: str, url: httpx.URL, headers: Mapping[str, str],
                   body: bytes | None, seconds: float) -> H1Response:
        """Send one request and read the response head; the body is read from the result."""
        payload = request_bytes(method, url, headers, body)
        origin = (url.scheme, url.port or (443 if url.scheme == "https" else 80))
        while True:
            conn, reused = await self._checkout(url, origin, seconds)
            try:
                await conn.stream.write(payload, seconds)
                head = await read_head(conn, seconds)
            except (_UnansweredError, httpcore.WriteError, httpcore.ReadError):
                await conn.close()
                if reused and method in {"GET", "HEAD"}:
                    continue  # the server dropped an idle socket as we reused it: dial anew
                raise
            except BaseException:
                await conn.close()
                raise
            response = H1Response(self, conn, origin, head, method, seconds)
            await response.start()
            return response

    async def checkin(self, origin: tuple[str, int], conn: _Conn) -> None:
        idle = self._idle.setdefault(origin, [])
        if self._closed or len(idle) >= self._keep:
            await conn.close()
            return
        conn.idle_since = time.monotonic()
        idle.append(conn)

    async def aclose(self) -> None:
        self._closed = True
        doomed = [conn for idle in self._idle.values() for conn in idle]
        self._idle.clear()
        for conn in doomed:
            await conn.close()

    async def _checkout(self, url: httpx.URL, origin: tuple[str, int], seconds: float
                        ) -> tuple[_Conn, bool]:
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            if now - conn.idle_since > self._idle_expiry or conn.stream.get_extra_info(
                    "is_readable"):
                await conn.close()
                continue
            return conn, True
        host = url.raw_host.decode("ascii")
        stream = await self._backend.connect_tcp(host, origin[1], timeout=seconds)
        if origin[0] == "https":
            try:
                stream = await stream.start_tls(self._tls, server_hostname=host, timeout=seconds)
            except BaseException:
                await stream.aclose()
                raise
        return _Conn(stream), False

