"""Which requests go through the egress proxy (R-HTTP-6).

A proxy is optional. When one is set, hosts under a direct suffix (default
``.cn`` and ``.local``: sites that are faster or only reachable without it) and
hosts written as IP addresses go direct; a caller can force either way per
request (paid APIs mark themselves direct).
"""

from __future__ import annotations

from tidings.net.addresses import parse_address
from tidings.settings import Settings


def uses_proxy(host: str, settings: Settings, override: bool | None = None) -> bool:
    """True when a request to ``host`` should be sent through ``settings.egress_proxy``."""
    if not settings.egress_proxy or override is False:
        return False
    if override is True:
        return True
    if parse_address(host) is not None:
        return False
    name = host.lower().rstrip(".")
    for suffix in settings.direct_suffixes:
        bare = suffix.lower().strip().lstrip(".")
        if bare and (name == bare or name.endswith("." + bare)):
            return False
    return True
