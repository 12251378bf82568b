"""The ``x`` kind: X accounts read through a paid search API (R-X-1..5).

An account line is ``x:@handle`` (``twitter:`` too) or a profile address; its
sources start at the 30-minute batch cadence (R-SCHED-5) and keep it while they
share searches. A later run is never cut by the per-run limit: the watermark
moves past everything a search returned, so what a limit cut off would never
come again (SPEC section 5).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tidings.model import SourceKind
from tidings.readers import bodies
from tidings.readers.kind import Account, Kind, paid_list
from tidings.readers.x.reader import XReader

X = SourceKind("x")
_LINE = re.compile(r"^(?:x:|twitter:)@?([A-Za-z0-9_]{1,15})$", re.IGNORECASE)
_PROFILE = re.compile(
    r"^https?://(?:www\.|mobile\.)?(?:x|twitter)\.com/@?([A-Za-z0-9_]{1,15})/?$", re.IGNORECASE)
_NOT_HANDLES = frozenset({"home", "i", "search", "explore", "settings", "intent", "share"})


def account(text: str) -> Account | None:
    """``x:@handle`` or an x.com / twitter.com profile address; else None."""
    found = _LINE.match(text) or _PROFILE.match(text)
    if not found or found.group(1).lower() in _NOT_HANDLES:
        return None
    handle = found.group(1)
    return Account(f"https://x.com/{handle}", handle, {"handle": handle})


def facts(cursor: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The watermark, with the searches left unfinished and those dropped; bodies waiting."""
    if not cursor.get("since_id"):
        return bodies.facts(cursor)
    text = f"tweets after {cursor['since_id']}"
    if cursor.get("segments"):
        text += f" · {len(cursor['segments'])} unfinished searches"
    if cursor.get("dropped"):
        text += f" · {cursor['dropped']} dropped"
    return [("Watermark", text), *bodies.facts(cursor)]


KIND = Kind(
    name=X, reader=XReader, summary="an X account, through a paid search API",
    cost=paid_list, first_interval_min=30, fetch_bodies=False,
    own_hosts=("x.com", "twitter.com"), batch_limited=False, batch_cadence=True,
    account=account, account_form="x:@handle", id_prefix="x", opml=True, facts=facts,
)
