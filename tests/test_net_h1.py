"""HTTP/1.1 on the wire (net/h1.py): framing, keep-alive and malformed answers.

A raw TCP server on 127.0.0.1 answers each request with scripted bytes, so the
tests can send what no well-behaved server library would: bad status lines,
conflicting lengths, chunks that lie, heads that never end.
"""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from tidings.errors import BodyTooLargeError, FetchError, FetchTimeoutError
from tidings.net import Fetcher
from tidings.net.h1 import ResponseError, parse_head
from tidings.settings import Settings

Answer = bytes | Callable[[bytes], bytes]


@dataclass
class Scripted:
    """Answers request n with ``answers[n]`` (the last one repeats); ``close`` after each."""

    answers: list[Answer]
    close_after: set[int] = field(default_factory=set)
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0
    url: str = ""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                request = head + (await reader.readexactly(length) if length else b"")
                n = len(self.requests)
                self.requests.append(request)
                answer = self.answers[min(n, len(self.answers) - 1)]
                writer.write(answer(request) if callable(answer) else answer)
                await writer.drain()
                if n in self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


Wire = Callable[..., Awaitable[Scripted]]


@pytest.fixture
async def wire() -> AsyncIterator[Wire]:
    servers: list[asyncio.Server] = []

    async def start(*answers: Answer, close_after: set[int] | None = None) -> Scripted:
        script = Scripted(list(answers), close_after or set())
        server = await asyncio.start_server(script.handle, "127.0.0.1", 0)
        servers.append(server)
        script.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        return script

    yield start
    for server in servers:
        server.close()


@pytest.fixture
async def fetcher(settings: Settings) -> AsyncIterator[Fetcher]:
    async with Fetcher(settings) as f:
        yield f


def ok(body: bytes, *headers: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n" % len(body) + b"".join(
        h + b"\r\n" for h in headers) + b"\r\n" + body)


def chunked(*pieces: bytes, trailer: bytes = b"") -> bytes:
    body = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in pieces)
    return (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + body + b"0\r\n"
            + trailer + b"\r\n")


async def test_request_line_host_and_headers_are_sent(wire: Wire,
                                                      fetcher: Fetcher) -> None:
    script = await wire(ok(b"hi"))
    resp = await fetcher.fetch(f"{script.url}/a%20b?q=1", etag='"x"', headers={
        "X-Test": "1", "Host": "elsewhere.example", "Content-Length": "99"})
    assert resp.content == b"hi"
    request = script.requests[0]
    assert request.startswith(b"GET /a%20b?q=1 HTTP/1.1\r\nhost: 127.0.0.1:")
    assert b'\r\nif-none-match: "x"\r\n' in request and b"\r\nx-test: 1\r\n" in request
    assert b"elsewhere" not in request and b"content-length" not in request  # framing is ours


async def test_json_body_has_its_type_and_length(wire: Wire,
                                                 fetcher: Fetcher) -> None:
    script = await wire(ok(b"{}"))
    await fetcher.fetch(script.url + "/api", method="POST", json={"q": "中"})
    head, _, body = script.requests[0].partition(b"\r\n\r\n")
    assert b"content-type: application/json" in head
    assert body == '{"q":"中"}'.encode() and b"content-length: %d" % len(body) in head


async def test_chunked_bodies_with_extensions_and_trailers(wire: Wire,
                                                           fetcher: Fetcher) -> None:
    script = await wire(chunked(b"<rss>", b"x" * 70_000, b"</rss>",
                                          trailer=b"x-sum: 1\r\n"))
    for _ in range(3):
        assert (await fetcher.fetch(script.url)).content == b"<rss>" + b"x" * 70_000 + b"</rss>"
    assert script.connections == 1


async def test_gzip_over_chunks_is_decoded(wire: Wire,
                                           fetcher: Fetcher) -> None:
    packed = gzip.compress(b"<feed/>" * 1000)
    answer = chunked(packed[:100], packed[100:]).replace(
        b"chunked\r\n", b"chunked\r\ncontent-encoding: gzip\r\n", 1)
    script = await wire(answer)
    assert (await fetcher.fetch(script.url)).content == b"<feed/>" * 1000


async def test_interim_answers_and_stray_line_breaks_are_skipped(
        wire: Wire, fetcher: Fetcher) -> None:
    script = await wire(b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n"
                            + ok(b"one") + b"\r\n", b"\r\n" + ok(b"two"))
    assert (await fetcher.fetch(script.url)).content == b"one"
    assert (await fetcher.fetch(script.url)).content == b"two"


async def test_folded_and_repeated_headers(wire: Wire,
                                           fetcher: Fetcher) -> None:
    script = await wire(ok(b"x", b"X-Long: a", b"  b", b"Vary: one", b"vary: two",
                                     b"Server:x"))
    resp = await fetcher.fetch(script.url)
    assert (resp.headers["x-long"], resp.headers["vary"], resp.headers["server"]) == (
        "a b", "one, two", "x")
    lf_only = await wire(b"HTTP/1.1 200 OK\ncontent-length: 2\n\nok")
    assert (await fetcher.fetch(lf_only.url)).content == b"ok"


async def test_body_until_close_and_connection_close(wire: Wire,
                                                     fetcher: Fetcher) -> None:
    script = await wire(b"HTTP/1.0 200 OK\r\n\r\nold server",
                            close_after={0, 1, 2})
    assert (await fetcher.fetch(script.url)).content == b"old server"
    closing = await wire(ok(b"a", b"Connection: close"), close_after={0, 1, 2})
    for _ in range(2):
        assert (await fetcher.fetch(closing.url)).content == b"a"
    assert closing.connections == 2  # the pool never reuses a socket the server closes


async def test_304_and_head_answers_release_the_socket_at_once(
        wire: Wire, fetcher: Fetcher) -> None:
    script = await wire(b"HTTP/1.1 304 Not Modified\r\netag: \"1\"\r\n\r\n",
                            b"HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n",
                            ok(b"after"))
    resp = await fetcher.fetch(script.url, etag='"1"')
    assert resp.not_modified
    head = await fetcher.fetch(script.url, method="HEAD")
    assert head.status == 200 and head.content == b""
    assert (await fetcher.fetch(script.url)).content == b"after"
    assert script.connections == 1


async def test_a_reused_socket_closed_unanswered_is_redialed_for_a_get(
        wire: Wire, fetcher: Fetcher) -> None:
    # request 2 arrives on the kept socket and the server hangs up without a word,
    # as one does when its keep-alive timer fires just as the request comes in
    script = await wire(ok(b"a"), b"", ok(b"b"), close_after={1})
    assert (await fetcher.fetch(script.url)).content == b"a"
    assert (await fetcher.fetch(script.url)).content == b"b"
    assert script.connections == 2 and len(script.requests) == 3
    # a POST is not repeated: the server may have acted on it
    posted = await wire(ok(b"a"), b"", ok(b"b"), close_after={1})
    await fetcher.fetch(posted.url, method="POST", json={})
    with pytest.raises(FetchError, match="without answering"):
        await fetcher.fetch(posted.url, method="POST", json={})


async def test_bytes_after_an_answer_spoil_the_socket(wire: Wire, fetcher: Fetcher) -> None:
    # an unasked second answer on the socket must never be read as the next one's
    stale = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nstale"
    script = await wire(ok(b"a") + stale, ok(b"b"), ok(b"c"))
    assert [(await fetcher.fetch(script.url)).content for _ in range(3)] == [b"a", b"b", b"c"]
    assert script.connections == 2


async def test_a_socket_the_server_closed_while_idle_is_not_reused(
        wire: Wire, fetcher: Fetcher) -> None:
    script = await wire(ok(b"a"), close_after={0, 1, 2, 3})
    for _ in range(3):
        assert (await fetcher.fetch(script.url)).content == b"a"
        await asyncio.sleep(0.05)
    assert script.connections == 3 and len(script.requests) == 3


@pytest.mark.parametrize(("answer", "reason"), [
    (b"SPDY/3 200 OK\r\n\r\n", "not an HTTP/1 status line"),
    (b"HTTP/1.1 2000 OK\r\n\r\n", "bad status code"),
    (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header line"),
    (b"HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n", "malformed header line"),
    (b"HTTP/1.1 200 OK\r\n  folded: first\r\n\r\n", "continuation line"),
    (b"HTTP/1.1 200 OK\r\ncontent-length: 3, 4\r\n\r\nabcd", "bad Content-Length"),
    (b"HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n", "bad Content-Length"),
    (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort", "5 bytes before the body's end"),
    (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"),
    (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
     "chunk longer than its size"),
    (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab", "before the body's end"),
    (b"HTTP/1.1 101 Switching Protocols\r\n\r\n", "switched protocols"),
    (b"HTTP/1.1 200 OK\r\nx: " + b"y" * 70_000 + b"\r\n\r\n", "larger than 64 KiB"),
    (b"HTTP/1.1 200 OK\r\ncontent-", "in the middle of the response headers"),
    (b"", "closed the connection without answering"),
])
async def test_malformed_answers_fail_the_fetch_with_a_reason(
        wire: Wire, fetcher: Fetcher, answer: bytes, reason: str) -> None:
    script = await wire(answer, close_after={0})
    with pytest.raises(FetchError, match=reason) as caught:
        await fetcher.fetch(script.url + "/feed")
    message = str(caught.value)
    assert message.startswith(f"{script.url}/feed: ") and "\n" not in message


async def test_a_head_that_never_ends_times_out(wire: Wire,
                                                fetcher: Fetcher) -> None:
    script = await wire(b"HTTP/1.1 200 OK\r\nx: y\r\n")
    with pytest.raises(FetchTimeoutError):
        await fetcher.fetch(script.url, timeout=0.5)


async def test_the_cap_holds_for_bodies_until_close(wire: Wire,
                                                    fetcher: Fetcher) -> None:
    script = await wire(b"HTTP/1.0 200 OK\r\n\r\n" + b"x" * 300_000)
    with pytest.raises(BodyTooLargeError):
        await fetcher.fetch(script.url, max_bytes=100_000)


async def test_header_values_with_line_breaks_are_not_sent(
        wire: Wire, fetcher: Fetcher) -> None:
    script = await wire(ok(b"x"))
    with pytest.raises(FetchError, match=r"cannot send the request .*line break"):
        await fetcher.fetch(script.url, etag='"1"\r\nx-injected: 1')
    with pytest.raises(FetchError, match="not a token"):
        await fetcher.fetch(script.url, headers={"bad name": "1"})
    with pytest.raises(FetchError, match="not a token"):
        await fetcher.fetch(script.url, method="GET / HTTP/1.0\r\nX:")
    assert script.requests == []


def test_parse_head_reads_status_reason_and_headers() -> None:
    head = parse_head(b"HTTP/1.1 404 Not Found Here\r\nA: 1\r\nb:2  \r\nA: 3")
    assert (head.status, head.reason, head.headers) == (404, "Not Found Here",
                                                        {"a": "1, 3", "b": "2"})
    assert parse_head(b"HTTP/1.0 200").reason == ""
    with pytest.raises(ResponseError):
        parse_head(b"HTTP/1.1 20x OK")
