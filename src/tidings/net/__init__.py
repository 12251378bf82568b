"""tidings.net: the guarded outbound HTTP layer, the only code that opens connections.

Use one :class:`Fetcher` per process and call :meth:`Fetcher.fetch` (alias
:func:`guarded_fetch`); turn bodies into text with :func:`decode_body`.
See docs/net.md for how the guard works.
"""

from tidings.net.addresses import (
    AllowList,
    allow_list_from_settings,
    classify_address,
    is_local_name,
    is_public_address,
    url_refusal,
)
from tidings.net.body import Body
from tidings.net.charset import decode_body, decode_text
from tidings.net.client import Fetcher, guarded_fetch, retry_after
from tidings.net.politeness import HostLimiter, parse_retry_after
from tidings.net.resolver import ResolveError, Resolver, SystemResolver
from tidings.net.routing import uses_proxy
from tidings.net.types import Response

__all__ = [
    "AllowList",
    "Body",
    "Fetcher",
    "HostLimiter",
    "ResolveError",
    "Resolver",
    "Response",
    "SystemResolver",
    "allow_list_from_settings",
    "classify_address",
    "decode_body",
    "decode_text",
    "guarded_fetch",
    "is_local_name",
    "is_public_address",
    "parse_retry_after",
    "retry_after",
    "url_refusal",
    "uses_proxy",
]
