"""The SSRF guard through the real Fetcher (R-HTTP-1, R-HTTP-2).

Private addresses are only ever *claimed* by a table resolver; the recording
dial hook shows the guard refused before anything was dialed, and it could not
reach them anyway.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from netservers import RecordingDialer, ServerLog, TableResolver, serve, standard_app
from tidings.errors import BlockedAddressError, ConnectError
from tidings.net import AllowList, Fetcher
from tidings.net.addresses import parse_address
from tidings.net.guard import CURRENT_HOP, AddressRefusedError, Guard, HopCheck
from tidings.settings import Settings


@pytest.fixture
async def server() -> AsyncIterator[str]:
    async with serve(standard_app(ServerLog())) as base:
        yield base


def _port(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("10.0.0.1", "private"),
        ("192.168.1.20", "private"),
        ("172.20.3.4", "private"),
        ("169.254.169.254", "link-local"),
        ("100.64.0.7", "shared (CGNAT)"),
        ("::ffff:10.0.0.1", "private"),
        ("fd00::5", "private"),
        ("0.0.0.0", "unspecified"),
        ("127.0.0.5", "loopback"),
    ],
)
async def test_name_resolving_to_a_private_address_is_refused_before_dialing(
    settings: Settings, address: str, kind: str
) -> None:
    resolver = TableResolver.fixed({"feeds.example.com": [address]})
    dialer = RecordingDialer()
    async with Fetcher(settings, resolver=resolver, dial_hook=dialer) as fetcher:
        with pytest.raises(BlockedAddressError) as info:
            await fetcher.fetch("http://feeds.example.com/rss")
    assert dialer.dialed == []
    assert fetcher.connections_opened == 0
    message = str(info.value)
    assert message.startswith("http://feeds.example.com/rss: refused: ")
    assert f"is a {kind} address" in message or f"is an {kind} address" in message
    assert "TIDINGS_ALLOW_PRIVATE_HOSTS" in message
    assert info.value.url == "http://feeds.example.com/rss"


async def test_one_private_answer_among_public_ones_refuses_the_host(settings: Settings) -> None:
    resolver = TableResolver.fixed({"mixed.example.com": ["93.184.216.34", "10.0.0.1"]})
    dialer = RecordingDialer()
    async with Fetcher(settings, resolver=resolver, dial_hook=dialer) as fetcher:
        with pytest.raises(BlockedAddressError, match=r"10\.0\.0\.1 is a private address"):
            await fetcher.fetch("http://mixed.example.com/")
    assert dialer.dialed == []


async def test_dns_rebinding_cannot_swap_in_a_private_address(
    settings: Settings, server: str
) -> None:
    """Allowed on the first lookup, private on the next: the checked address is the one
    dialed, each connection costs one lookup, and the changed answer is refused.

    (127.0.0.1 plays the public address: the settings allow it, and it is the only
    address a test may dial.)
    """
    port = _port(server)
    resolver = TableResolver({"rebind.example.com": [["127.0.0.1"], ["10.0.0.1"]]})
    dialer = RecordingDialer()
    async with Fetcher(settings, resolver=resolver, dial_hook=dialer) as fetcher:
        first = await fetcher.fetch(f"http://rebind.example.com:{port}/close")
        assert first.content == b"closing"
        assert resolver.calls == ["rebind.example.com"]  # one lookup for that connection
        with pytest.raises(BlockedAddressError, match=r"10\.0\.0\.1 is a private address"):
            await fetcher.fetch(f"http://rebind.example.com:{port}/close")
    assert dialer.dialed == [("127.0.0.1", port)]
    assert resolver.calls == ["rebind.example.com", "rebind.example.com"]


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:9/",
        "http://[::ffff:127.0.0.1]:9/",
        "http://0.0.0.0:9/",
        "http://[fe80::1%25eth0]/",
    ],
)
async def test_private_ip_literals_are_refused_without_a_lookup(
    settings: Settings, url: str
) -> None:
    resolver = TableResolver({})
    dialer = RecordingDialer()
    async with Fetcher(settings, resolver=resolver, dial_hook=dialer) as fetcher:
        with pytest.raises(BlockedAddressError, match="refused"):
            await fetcher.fetch(url)
    assert dialer.dialed == []
    assert resolver.calls == []


@pytest.mark.parametrize(
    "host", ["localhost", "LocalHost.", "printer.local", "metadata.google.internal", "intranet"]
)
async def test_local_names_are_refused_by_name(settings: Settings, host: str) -> None:
    resolver = TableResolver.fixed({host: ["93.184.216.34"]})
    dialer = RecordingDialer()
    async with Fetcher(settings, resolver=resolver, dial_hook=dialer) as fetcher:
        with pytest.raises(BlockedAddressError, match="is a local host name"):
            await fetcher.fetch(f"http://{host}/")
    assert resolver.calls == []
    assert dialer.dialed == []


async def test_localhost_is_refused_although_its_test_server_runs(
    settings: Settings, server: str
) -> None:
    """settings allow 127.0.0.1 (the address), not the name localhost."""
    async with Fetcher(settings) as fetcher:
        with pytest.raises(BlockedAddressError, match="localhost is a local host name"):
            await fetcher.fetch(f"http://localhost:{_port(server)}/ok")
        assert fetcher.connections_opened == 0


async def test_unusual_spellings_of_loopback_are_checked_after_resolution(
    settings: Settings, server: str
) -> None:
    strict = replace(settings, allow_private_hosts=())
    async with Fetcher(strict) as fetcher:  # the system resolver reads 0x7f.0.0.1 as 127.0.0.1
        with pytest.raises(BlockedAddressError, match=r"127\.0\.0\.1 is a loopback address"):
            await fetcher.fetch(f"http://0x7f.0.0.1:{_port(server)}/ok")
        assert fetcher.connections_opened == 0


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.com/x", "gopher://example.com/", "data:,hi"]
)
async def test_only_http_and_https_are_fetched(settings: Settings, url: str) -> None:
    async with Fetcher(settings) as fetcher:
        with pytest.raises(BlockedAddressError, match="only http and https"):
            await fetcher.fetch(url)


async def test_allow_listed_address_is_reached(settings: Settings, server: str) -> None:
    async with Fetcher(settings) as fetcher:
        resp = await fetcher.fetch(f"{server}/ok")
    assert resp.status == 200
    assert resp.content == b"hello"
    assert fetcher.connections_opened == 1


async def test_allow_listed_name_trusts_its_private_answer(settings: Settings, server: str) -> None:
    allowing = replace(settings, allow_private_hosts=("wiki.corp.example",))
    resolver = TableResolver.fixed({"wiki.corp.example": ["127.0.0.1"]})
    async with Fetcher(allowing, resolver=resolver) as fetcher:
        resp = await fetcher.fetch(f"http://wiki.corp.example:{_port(server)}/ok")
    assert resp.content == b"hello"


async def test_redirect_to_a_loopback_address_that_is_not_allowed_is_refused(
    settings: Settings, server: str
) -> None:
    """Only 127.0.0.1 is allowed; nothing listens on 127.0.0.2 and nothing is dialed there."""
    target = f"http://127.0.0.2:{_port(server)}/ok"
    dialer = RecordingDialer()
    async with Fetcher(settings, dial_hook=dialer) as fetcher:
        with pytest.raises(BlockedAddressError) as info:
            await fetcher.fetch(f"{server}/to?url={target}")
    assert dialer.dialed == [("127.0.0.1", _port(server))]
    assert "(redirected to http://127.0.0.2:" in str(info.value)
    assert "127.0.0.2 is a loopback address" in str(info.value)


async def test_redirect_to_a_name_resolving_privately_is_refused(
    settings: Settings, server: str
) -> None:
    resolver = TableResolver.fixed({"evil.example.com": ["192.168.0.1"]})
    dialer = RecordingDialer()
    async with Fetcher(settings, resolver=resolver, dial_hook=dialer) as fetcher:
        with pytest.raises(BlockedAddressError, match=r"192\.168\.0\.1 is a private address"):
            await fetcher.fetch(f"{server}/to?url=http://evil.example.com/")
    assert all(host == "127.0.0.1" for host, _ in dialer.dialed)


async def test_unresolvable_name_is_a_connect_error(settings: Settings) -> None:
    async with Fetcher(settings, resolver=TableResolver({})) as fetcher:
        with pytest.raises(ConnectError, match=r"^http://nowhere\.example\.com/: cannot resolve"):
            await fetcher.fetch("http://nowhere.example.com/")


async def test_refused_connection_is_a_connect_error(settings: Settings) -> None:
    async with serve(standard_app(ServerLog())) as base:
        pass  # the port is free again: nothing listens there now
    async with Fetcher(settings) as fetcher:
        with pytest.raises(ConnectError, match="connection failed"):
            await fetcher.fetch(f"{base}/ok")


# ------------------------------------------------ the dial-time check on its own


def _addr_info(address: str, port: int = 80) -> tuple[object, ...]:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    return (family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))


@pytest.mark.parametrize(
    ("hop", "approved", "address", "reason"),
    [
        (None, (), "93.184.216.34", "no guarded request"),  # a socket outside any fetch
        ("feeds.example.com", (), "93.184.216.34", "was not checked"),  # a second lookup
        ("feeds.example.com", ("93.184.216.34",), "93.184.216.35", "was not checked"),
        ("10.0.0.1", (), "10.0.0.1", "10.0.0.1 is a private address"),  # an IP literal
        ("93.184.216.34", (), "10.0.0.1", "was not checked"),
    ],
)
def test_the_socket_factory_refuses_any_address_the_guard_did_not_check(
    hop: str | None, approved: tuple[str, ...], address: str, reason: str
) -> None:
    """aiohttp asks the factory for every socket it dials; only checked addresses get one."""
    dialer = RecordingDialer()
    guard = Guard(TableResolver({}), AllowList(), dialer)
    token = CURRENT_HOP.set(HopCheck(hop, {parse_address(a) for a in approved})) if hop else None
    try:
        with pytest.raises(AddressRefusedError, match=reason):
            guard.socket_factory(_addr_info(address))
    finally:
        if token is not None:
            CURRENT_HOP.reset(token)
    assert dialer.dialed == [] and guard.connections_opened == 0


def test_the_socket_factory_makes_sockets_for_checked_addresses() -> None:
    """Sockets are made, never connected here: the hook just records."""
    dials: list[tuple[str, int]] = []
    guard = Guard(TableResolver({}), AllowList(), lambda address, port: dials.append(
        (address, port)))
    for host, approved, address in [
        ("feeds.example.com", {"93.184.216.34"}, "93.184.216.34"),  # what the resolver approved
        ("2606:2800:220:1::1", set(), "2606:2800:220:1::1"),  # an IP literal that is public
    ]:
        token = CURRENT_HOP.set(HopCheck(host, {parse_address(a) for a in approved}))
        try:
            with guard.socket_factory(_addr_info(address, 443)) as sock:
                assert sock.type == socket.SOCK_STREAM
        finally:
            CURRENT_HOP.reset(token)
    assert dials == [("93.184.216.34", 443), ("2606:2800:220:1::1", 443)]
    assert guard.connections_opened == 2
