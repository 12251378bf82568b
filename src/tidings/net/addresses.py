"""Which addresses and host names the guard may reach (R-HTTP-1).

Pure functions, no I/O: the network backend calls them on the address it is
about to dial, so the verdict and the connection concern the same address.

The IPv6 rule is an allow-list of its own: only global unicast (2000::/3) can
be public, minus the special ranges inside it. Addresses that embed an IPv4
address (IPv4-mapped, NAT64, 6to4) get the verdict of the embedded address, so
``::ffff:10.0.0.1`` is as private as ``10.0.0.1``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from tidings.errors import ConfigError
from tidings.settings import Settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

AddressKind = Literal[
    "public",
    "loopback",
    "private",
    "link-local",
    "shared (CGNAT)",
    "multicast",
    "unspecified",
    "reserved",
]

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

# Order matters only for the name given in error messages.
_V4_SPECIAL: tuple[tuple[ipaddress.IPv4Network, AddressKind], ...] = (
    (_V4("0.0.0.0/8"), "unspecified"),
    (_V4("127.0.0.0/8"), "loopback"),
    (_V4("10.0.0.0/8"), "private"),
    (_V4("172.16.0.0/12"), "private"),
    (_V4("192.168.0.0/16"), "private"),
    (_V4("100.64.0.0/10"), "shared (CGNAT)"),
    (_V4("169.254.0.0/16"), "link-local"),
    (_V4("224.0.0.0/4"), "multicast"),
    (_V4("192.0.0.0/24"), "reserved"),  # IETF protocol assignments
    (_V4("192.0.2.0/24"), "reserved"),  # documentation
    (_V4("198.51.100.0/24"), "reserved"),
    (_V4("203.0.113.0/24"), "reserved"),
    (_V4("192.88.99.0/24"), "reserved"),  # old 6to4 relay anycast
    (_V4("198.18.0.0/15"), "reserved"),  # benchmarking
    (_V4("240.0.0.0/4"), "reserved"),  # incl. 255.255.255.255
)

_V6_GLOBAL = _V6("2000::/3")
_V6_SPECIAL: tuple[tuple[ipaddress.IPv6Network, AddressKind], ...] = (
    (_V6("::/128"), "unspecified"),
    (_V6("::1/128"), "loopback"),
    (_V6("fc00::/7"), "private"),  # unique local
    (_V6("fec0::/10"), "private"),  # old site-local
    (_V6("fe80::/10"), "link-local"),
    (_V6("ff00::/8"), "multicast"),
    (_V6("64:ff9b:1::/48"), "private"),  # local-use NAT64
    (_V6("2001::/23"), "reserved"),  # IETF protocol assignments, Teredo, ORCHID
    (_V6("2001:db8::/32"), "reserved"),  # documentation
    (_V6("3fff::/20"), "reserved"),  # documentation (RFC 9637)
)
_NAT64 = _V6("64:ff9b::/96")

#: host names that never leave the machine or the local network
_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".localdomain", ".home.arpa", ".lan")


def parse_address(text: str) -> IPAddress | None:
    """The address ``text`` spells (brackets and IPv6 zone allowed), else None.

    A host name is the common case and raising two ValueErrors to say so costs more
    than the rest of the check: an IPv4 address ends in a digit, an IPv6 one has a colon.
    """
    text = text.strip().removeprefix("[").removesuffix("]")
    if not text or (":" not in text and not text[-1].isdigit()):
        return None
    try:
        return _PARSED[text]
    except KeyError:
        pass
    try:
        ip: IPAddress | None = ipaddress.ip_address(text)
    except ValueError:
        ip = None
    if len(_PARSED) >= _MAX_PARSED:
        _PARSED.clear()
    _PARSED[text] = ip
    return ip


#: addresses parsed lately: the guard parses each one it approves again when it is
#: dialed, and the same hosting and CDN addresses recur (ipaddress objects are immutable)
_PARSED: dict[str, IPAddress | None] = {}
_MAX_PARSED = 4096


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def classify_address(ip: IPAddress | str) -> AddressKind:
    """What kind of address ``ip`` is; only "public" may be dialed unless allowed."""
    addr = ip if not isinstance(ip, str) else ipaddress.ip_address(ip)
    if isinstance(addr, ipaddress.IPv4Address):
        for net, kind in _V4_SPECIAL:
            if addr in net:
                return kind
        return "public"
    addr = addr if addr.scope_id is None else ipaddress.IPv6Address(str(addr).split("%")[0])
    inner = _embedded_v4(addr)
    if inner is not None:
        return classify_address(inner)
    for net6, kind in _V6_SPECIAL:
        if addr in net6:
            return kind
    if addr.ipv4_mapped is None and addr in _V6("::/96"):
        return "reserved"  # deprecated IPv4-compatible form
    return "public" if addr in _V6_GLOBAL else "reserved"


def is_public_address(ip: IPAddress | str) -> bool:
    return classify_address(ip) == "public"


def is_local_name(host: str) -> bool:
    """Names that mean this machine or the local network, whatever DNS says."""
    name = host.lower().rstrip(".")
    return name in _LOCAL_NAMES or name.endswith(_LOCAL_SUFFIXES) or "." not in name


@dataclass(frozen=True, slots=True)
class AllowList:
    """Hosts and networks the guard may reach although they are not public.

    A name entry (``intranet.example``, or ``.corp.example`` for a whole
    suffix) trusts whatever that name resolves to; a network entry
    (``127.0.0.1``, ``10.1.0.0/16``) trusts those addresses under any name.
    """

    names: frozenset[str] = frozenset()
    suffixes: tuple[str, ...] = ()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> AllowList:
        names: set[str] = set()
        suffixes: list[str] = []
        networks: list[IPNetwork] = []
        for raw in entries:
            entry = raw.strip().lower()
            if not entry:
                continue
            net = _parse_network(entry)
            if net is not None:
                networks.append(net)
            elif _looks_like_name(entry):
                if entry.startswith("."):
                    suffixes.append(entry)
                else:
                    names.add(entry.rstrip("."))
            else:
                raise ConfigError(
                    f"allow_private_hosts: {raw!r} is neither a host name nor an address/CIDR"
                )
        return cls(frozenset(names), tuple(suffixes), tuple(networks))

    def allows_name(self, host: str) -> bool:
        name = host.lower().rstrip(".")
        return name in self.names or name.endswith(self.suffixes)

    def allows_address(self, ip: IPAddress) -> bool:
        return any(ip.version == net.version and ip in net for net in self.networks)


def allow_list_from_settings(settings: Settings) -> AllowList:
    """The allow-list of ``settings.allow_private_hosts`` (TIDINGS_ALLOW_PRIVATE_HOSTS)."""
    return AllowList.parse(settings.allow_private_hosts)


def _parse_network(entry: str) -> IPNetwork | None:
    try:
        return ipaddress.ip_network(entry.removeprefix("[").removesuffix("]"), strict=False)
    except ValueError:
        return None


def _looks_like_name(entry: str) -> bool:
    body = entry.strip(".")
    return bool(body) and all(ch.isalnum() or ch in "-._" for ch in body)


def address_refusal(ip: IPAddress, allow: AllowList) -> str | None:
    """Why ``ip`` may not be dialed, or None when it may."""
    if allow.allows_address(ip):
        return None
    kind = classify_address(ip)
    if kind == "public":
        return None
    article = "an" if kind[0] in "aeiou" else "a"
    return f"{ip} is {article} {kind} address"


def name_refusal(host: str, allow: AllowList) -> str | None:
    """Why the host name itself is refused (``localhost``, ``*.local``...), or None."""
    if parse_address(host) is not None or allow.allows_name(host):
        return None
    if is_local_name(host):
        return f"{host} is a local host name"
    return None


def url_refusal(url: str, allow: AllowList) -> str | None:
    """Why the guard would refuse ``url`` by its host alone (an address literal or a
    local name), or None; names that only resolve to private addresses are found when
    fetched. Sends nothing: for warnings before any request (OPML import)."""
    host = (urlsplit(url).hostname or "").strip("[]")
    ip = parse_address(host)
    return address_refusal(ip, allow) if ip is not None else name_refusal(host, allow)
