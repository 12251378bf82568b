"""The wire under the Fetcher: framing, keep-alive and malformed answers.

A raw TCP server on 127.0.0.1 answers each request with scripted bytes, so the
tests can send what no well-behaved server library would: bad status lines,
conflicting lengths, chunks that lie, heads that never end. Whatever the server
sends, the caller gets a one-line FetchError naming the URL, never a traceback.
"""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack

import pytest

from netservers import Scripted, ok, scripted
from tidings.errors import BodyTooLargeError, ConnectError, FetchError, FetchTimeoutError
from tidings.net import Fetcher
from tidings.settings import Settings

Wire = Callable[..., Awaitable[Scripted]]


@pytest.fixture
async def wire() -> AsyncIterator[Wire]:
    async with AsyncExitStack() as stack:

        async def start(*answers: bytes, close_after: set[int] | None = None) -> Scripted:
            return await stack.enter_async_context(scripted(*answers, close_after=close_after))

        yield start


@pytest.fixture
async def fetcher(settings: Settings) -> AsyncIterator[Fetcher]:
    async with Fetcher(settings) as f:
        yield f


def chunked(*pieces: bytes, trailer: bytes = b"") -> bytes:
    body = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in pieces)
    return (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + body + b"0\r\n"
            + trailer + b"\r\n")


def _header_names(request: bytes) -> list[str]:
    head = request.split(b"\r\n\r\n", 1)[0].decode()
    return sorted(line.split(":", 1)[0].lower() for line in head.split("\r\n")[1:])


async def test_only_our_headers_are_sent(wire: Wire, fetcher: Fetcher) -> None:
    script = await wire(ok(b"hi"))
    resp = await fetcher.fetch(f"{script.url}/a%20b?q=1", etag='"x"', headers={
        "X-Test": "1", "Host": "elsewhere.example", "Content-Length": "99",
        "Accept-Encoding": "br"})
    assert resp.content == b"hi"
    request = script.requests[0]
    assert request.startswith(b"GET /a%20b?q=1 HTTP/1.1\r\n")
    assert f"\r\nhost: {script.url.removeprefix('http://')}\r\n".encode() in request.lower()
    assert b'\r\nif-none-match: "x"\r\n' in request and b"\r\nx-test: 1\r\n" in request
    assert b"\r\naccept-encoding: gzip, deflate\r\n" in request  # only what we can inflate
    assert _header_names(request) == [
        "accept", "accept-encoding", "host", "if-none-match", "user-agent", "x-test"]


async def test_a_request_replaces_the_usual_headers_it_names(
        wire: Wire, fetcher: Fetcher, settings: Settings) -> None:
    """The usual headers are the sessions' own; a request's own accept or user agent
    replaces them, never goes next to them, and a twin (``with_keepalive``) sends them too."""
    script = await wire(ok(b"a"), ok(b"b"), ok(b"c"))
    await fetcher.fetch(script.url, headers={"Accept": "text/html"}, user_agent="crawler/1")
    await fetcher.fetch(script.url)
    twin = fetcher.with_keepalive(1.0)
    try:
        await twin.fetch(script.url)
    finally:
        await twin.aclose()
    own, usual, twins = (request.lower() for request in script.requests)
    assert _header_names(own) == ["accept", "accept-encoding", "host", "user-agent"]
    assert b"\r\naccept: text/html\r\n" in own and b"\r\nuser-agent: crawler/1\r\n" in own
    for request in (usual, twins):
        assert _header_names(request) == ["accept", "accept-encoding", "host", "user-agent"]
        assert b"\r\naccept: */*\r\n" in request
        assert f"\r\nuser-agent: {settings.user_agent}\r\n".lower().encode() in request


async def test_a_header_name_seen_before_still_has_its_value_checked(
        wire: Wire, fetcher: Fetcher) -> None:
    """Good header names are remembered; their values are checked on every request."""
    script = await wire(ok(b"x"))
    await fetcher.fetch(script.url, headers={"x-seen": "1"})
    with pytest.raises(FetchError, match="line break"):
        await fetcher.fetch(script.url, headers={"x-seen": "1\r\nx-injected: 1"})
    with pytest.raises(FetchError, match="not a token"):
        await fetcher.fetch(script.url, headers={"x-seen:": "1"})
    assert len(script.requests) == 1


async def test_json_body_has_its_type_and_length(wire: Wire, fetcher: Fetcher) -> None:
    script = await wire(ok(b"{}"))
    await fetcher.fetch(script.url + "/api", method="POST", json={"q": "中"})
    head, _, body = script.requests[0].partition(b"\r\n\r\n")
    assert b"content-type: application/json" in head.lower()
    assert body == '{"q":"中"}'.encode() and b"content-length: %d" % len(body) in head.lower()


async def test_chunked_bodies_with_extensions_and_trailers(wire: Wire,
                                                           fetcher: Fetcher) -> None:
    script = await wire(chunked(b"<rss>", b"x" * 70_000, b"</rss>", trailer=b"x-sum: 1\r\n"))
    for _ in range(3):
        assert (await fetcher.fetch(script.url)).content == b"<rss>" + b"x" * 70_000 + b"</rss>"
    assert script.connections == 1


async def test_gzip_over_chunks_is_decoded(wire: Wire, fetcher: Fetcher) -> None:
    packed = gzip.compress(b"<feed/>" * 1000)
    answer = chunked(packed[:10], packed[10:]).replace(
        b"chunked\r\n", b"chunked\r\ncontent-encoding: gzip\r\n", 1)
    script = await wire(answer)
    assert (await fetcher.fetch(script.url)).content == b"<feed/>" * 1000


async def test_interim_answers_are_skipped_and_bare_line_feeds_read(
        wire: Wire, fetcher: Fetcher) -> None:
    script = await wire(b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n" + ok(b"one"))
    assert (await fetcher.fetch(script.url)).content == b"one"
    lf_only = await wire(b"HTTP/1.1 200 OK\ncontent-length: 2\nVary: a\nvary: b\n\nok")
    resp = await fetcher.fetch(lf_only.url)
    assert (resp.content, resp.headers["vary"]) == (b"ok", "a, b")


async def test_body_until_close_and_connection_close(wire: Wire, fetcher: Fetcher) -> None:
    script = await wire(b"HTTP/1.0 200 OK\r\n\r\nold server", close_after={0, 1, 2})
    assert (await fetcher.fetch(script.url)).content == b"old server"
    closing = await wire(ok(b"a", b"Connection: close"), close_after={0, 1, 2})
    for _ in range(2):
        assert (await fetcher.fetch(closing.url)).content == b"a"
    assert closing.connections == 2  # never reuses a socket the server closes


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
    with pytest.raises(ConnectError, match="connection failed"):
        await fetcher.fetch(posted.url, method="POST", json={})
    assert len(posted.requests) == 2


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
    (b"SPDY/3 200 OK\r\n\r\n", "status line"),
    (b"HTTP/1.1 2000 OK\r\n\r\n", "status"),
    (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "header"),
    (b"HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n", "header"),
    (b"HTTP/1.1 200 OK\r\n  folded: first\r\n\r\n", "header"),
    (b"HTTP/1.1 200 OK\r\ncontent-length: 3, 4\r\n\r\nabcd", "content-length"),
    (b"HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n", "content-length"),
    (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort", "not completed"),
    (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", "chunk size"),
    (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
     "chunk"),
    (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab", "not completed"),
    (b"HTTP/1.1 101 Switching Protocols\r\n\r\n", "interim answer 101"),
    (b"HTTP/1.1 200 OK\r\nx: " + b"y" * 70_000 + b"\r\n\r\n", "65536 bytes"),
    (b"HTTP/1.1 200 OK\r\ncontent-", "disconnected in the middle"),
    (b"", "disconnected"),
])
async def test_malformed_answers_are_one_line_connect_errors(
        wire: Wire, fetcher: Fetcher, answer: bytes, reason: str) -> None:
    script = await wire(answer, close_after={0, 1})  # a GET is tried twice when unanswered
    with pytest.raises(ConnectError) as caught:
        await fetcher.fetch(script.url + "/feed")
    message = str(caught.value)
    assert message.startswith(f"{script.url}/feed: connection failed (")
    assert reason in message.lower() and "\n" not in message
    assert caught.value.url == script.url + "/feed"


async def test_a_head_that_never_ends_times_out(wire: Wire, fetcher: Fetcher) -> None:
    script = await wire(b"HTTP/1.1 200 OK\r\nx: y\r\n")
    with pytest.raises(FetchTimeoutError):
        await fetcher.fetch(script.url, timeout=0.5)


async def test_the_cap_holds_for_bodies_until_close(wire: Wire, fetcher: Fetcher) -> None:
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
    with pytest.raises(FetchError, match="non-token characters"):  # aiohttp's own check
        await fetcher.fetch(script.url, method="GET / HTTP/1.0\r\nX:")
    assert script.requests == []
    assert script.connections == 0  # refused before dialing
