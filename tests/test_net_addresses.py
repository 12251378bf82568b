"""The address classifier and allow-list (R-HTTP-1): pure functions, property-tested."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tidings.errors import ConfigError
from tidings.net import AllowList, classify_address, is_local_name, is_public_address
from tidings.net.addresses import address_refusal, name_refusal, parse_address
from tidings.net.guard import Guard

V4 = st.integers(0, 2**32 - 1).map(ipaddress.IPv4Address)
V6 = st.integers(0, 2**128 - 1).map(ipaddress.IPv6Address)


def addresses_in(cidr: str) -> st.SearchStrategy[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    net = ipaddress.ip_network(cidr)
    return st.integers(0, net.num_addresses - 1).map(lambda i: net[i])


@pytest.mark.parametrize(
    ("cidr", "kind"),
    [
        ("10.0.0.0/8", "private"),
        ("172.16.0.0/12", "private"),
        ("192.168.0.0/16", "private"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("100.64.0.0/10", "shared (CGNAT)"),
        ("224.0.0.0/4", "multicast"),
        ("0.0.0.0/8", "unspecified"),
        ("240.0.0.0/4", "reserved"),
        ("fc00::/7", "private"),
        ("fe80::/10", "link-local"),
        ("ff00::/8", "multicast"),
        ("2001:db8::/32", "reserved"),
    ],
)
@given(data=st.data())
def test_every_address_of_a_special_range_is_refused(
    cidr: str, kind: str, data: st.DataObject
) -> None:
    ip = data.draw(addresses_in(cidr))
    assert classify_address(ip) == kind
    assert not is_public_address(ip)


@given(V4)
def test_ipv4_mapped_ipv6_gets_the_ipv4_verdict(ip: ipaddress.IPv4Address) -> None:
    mapped = ipaddress.IPv6Address(f"::ffff:{ip}")
    assert classify_address(mapped) == classify_address(ip)


@given(V4)
def test_nat64_and_6to4_get_the_embedded_verdict(ip: ipaddress.IPv4Address) -> None:
    nat64 = ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | int(ip))
    sixtofour = ipaddress.IPv6Address((0x2002 << 112) | (int(ip) << 80) | 1)
    assert classify_address(nat64) == classify_address(ip)
    assert classify_address(sixtofour) == classify_address(ip)


@given(V6)
def test_ipv6_outside_global_unicast_is_never_public(ip: ipaddress.IPv6Address) -> None:
    embeds_v4 = ip.ipv4_mapped is not None or ip in ipaddress.ip_network("64:ff9b::/96")
    if ip not in ipaddress.ip_network("2000::/3") and not embeds_v4:
        assert not is_public_address(ip)


@given(st.one_of(V4, V6))
def test_public_verdict_is_never_looser_than_the_standard_library(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    if is_public_address(ip):
        assert ip.is_global
        assert not (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast)


@pytest.mark.parametrize(
    "text",
    ["8.8.8.8", "93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001::200e"],
)
def test_ordinary_public_addresses_pass(text: str) -> None:
    assert classify_address(text) == "public"


@pytest.mark.parametrize(
    "text", ["169.254.169.254", "::1", "::", "::ffff:169.254.169.254", "fe80::1%eth0", "0.0.0.0"]
)
def test_classic_ssrf_targets_are_refused(text: str) -> None:
    assert not is_public_address(text)


@pytest.mark.parametrize(
    "host",
    ["localhost", "LOCALHOST.", "printer.local", "metadata.google.internal", "db.localhost",
     "intranet"],
)
def test_local_names_are_local(host: str) -> None:
    assert is_local_name(host)
    assert name_refusal(host, AllowList()) is not None


def test_ordinary_names_are_not_local() -> None:
    assert not is_local_name("example.com")
    assert name_refusal("example.com", AllowList()) is None


def test_allow_list_parses_names_suffixes_and_networks() -> None:
    allow = AllowList.parse(["127.0.0.1", " 10.1.0.0/16 ", "Intranet.Example", ".corp.example", ""])
    assert allow.allows_name("intranet.example")
    assert allow.allows_name("wiki.corp.example")
    assert not allow.allows_name("example")
    assert allow.allows_address(ipaddress.ip_address("10.1.200.3"))
    assert not allow.allows_address(ipaddress.ip_address("10.2.0.1"))
    assert address_refusal(ipaddress.ip_address("127.0.0.1"), allow) is None
    assert address_refusal(ipaddress.ip_address("127.0.0.2"), allow) == (
        "127.0.0.2 is a loopback address"
    )


def test_allow_list_rejects_junk_with_a_config_error() -> None:
    with pytest.raises(ConfigError, match="neither a host name"):
        AllowList.parse(["10.0.0.0/33"])
    with pytest.raises(ConfigError):
        AllowList.parse(["http://x/"])


def _standard_parse(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip().removeprefix("[").removesuffix("]"))
    except ValueError:
        return None


@given(st.one_of(V4.map(str), V6.map(str), V6.map(lambda ip: f"[{ip}]"), st.text(max_size=40),
                 st.from_regex(r"[a-z0-9.:\[\]%-]{1,40}", fullmatch=True)))
def test_parse_address_agrees_with_the_standard_library(text: str) -> None:
    """The shortcut for host names and the memo of parsed addresses change no answer."""
    assert parse_address(text) == _standard_parse(text)
    assert parse_address(text) == _standard_parse(text)  # now from the memo


@pytest.mark.parametrize("text", ["example.com", "b00001.test", "localhost", "host1",
                                  "1.2.3.4.example", "256.1.1.1", "::ffff:10.0.0.1",
                                  " 10.0.0.1 ", "[::1]", "fe80::1%eth0", ""])
def test_parse_address_on_names_and_odd_spellings(text: str) -> None:
    assert parse_address(text) == _standard_parse(text)


@given(st.one_of(V4, V6))
def test_the_guards_remembered_verdicts_are_the_verdicts(
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    allow = AllowList.parse(["127.0.0.1", "10.1.0.0/16", "fd00::/8"])
    guard = Guard(_NoResolver(), allow)
    assert guard.refusal(ip) == address_refusal(ip, allow)
    assert guard.refusal(ip) == address_refusal(ip, allow)  # now remembered


class _NoResolver:
    async def resolve(self, host: str, port: int) -> list[str]:
        raise AssertionError("no name is looked up here")
