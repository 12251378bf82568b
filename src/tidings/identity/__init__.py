"""Pure identity decisions (layer 2): URL normalization, identity keys, content
hashes, lossy comparison, title fingerprints and timeline rules (SPEC section 4).

No I/O and no clock: everything here runs for every item of every feed, and
every answer depends only on the arguments.
"""

from tidings.identity.fingerprint import title_fingerprint
from tidings.identity.hashing import comparable_text, content_hash, is_lossy, lossy_equal
from tidings.identity.keys import (
    BAD_SHARE,
    EntryKey,
    batch_keys,
    choose_identity_mode,
    identity_key,
    source_hash_key,
)
from tidings.identity.timeline import (
    BACKFILL_HOURS,
    BACKFILL_WINDOW,
    FUTURE_TOLERANCE,
    is_backfill,
    is_historical,
    trusted_published,
)
from tidings.identity.urls import DEFAULT_TRACKING, is_http_url, normalize_url, resolve_url

__all__ = [
    "BACKFILL_HOURS",
    "BACKFILL_WINDOW",
    "BAD_SHARE",
    "DEFAULT_TRACKING",
    "FUTURE_TOLERANCE",
    "EntryKey",
    "batch_keys",
    "choose_identity_mode",
    "comparable_text",
    "content_hash",
    "identity_key",
    "is_backfill",
    "is_historical",
    "is_http_url",
    "is_lossy",
    "lossy_equal",
    "normalize_url",
    "resolve_url",
    "source_hash_key",
    "title_fingerprint",
    "trusted_published",
]
