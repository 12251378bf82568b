"""Feed discovery (layer 3): find the feeds a page offers (R-DISC-1).

:func:`find_feeds_in_html` is pure (page text in, ranked candidates out);
:func:`discover` fetches the address through :class:`tidings.net.Fetcher`,
recognises a feed given directly, verifies candidates by parsing them with
the RSS reader, and probes the usual feed paths when nothing is declared.
"""

from tidings.discovery.autodiscover import (
    PROBE_PATHS,
    VERIFY_LIMIT,
    DiscoveryResult,
    discover,
    feed_type,
)
from tidings.discovery.html import find_feeds_in_html, guess_type, looks_like_feed_url
from tidings.discovery.platforms import platform_feeds

__all__ = [
    "PROBE_PATHS",
    "VERIFY_LIMIT",
    "DiscoveryResult",
    "discover",
    "feed_type",
    "find_feeds_in_html",
    "guess_type",
    "looks_like_feed_url",
    "platform_feeds",
]
