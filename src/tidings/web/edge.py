"""Input checked at the edge, before it reaches the facade or the database.

Found by the attack campaign (issue 16): an id past SQLite's 64-bit integers
raised OverflowError (a 500), ``ids=²`` passed ``str.isdigit`` and then failed
``int()``, and a NUL in a search reached the full-text engine whose error text
came back in the response. So ids are bounded ASCII integers, and a path or
query string holding control characters is refused as a whole (400) before
any route sees it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated
from urllib.parse import unquote_to_bytes

from fastapi import Path

#: the largest id accepted anywhere (SQLite's integers stop at 2**63 - 1)
MAX_ID = 2**62
ItemId = Annotated[int, Path(ge=0, le=MAX_ID, description="an item id")]
#: a raw page's position among an item's archived responses
RawIndex = Annotated[int, Path(ge=0, le=10_000)]

_DIGITS = re.compile(r"[0-9]{1,19}")
#: C0 controls except tab, LF and CR (form text may hold line breaks), and DEL
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def parse_ids(values: Iterable[object], limit: int) -> list[int] | None:
    """Comma-separated item ids from form fields; None if any part is not an id in
    range or there are more than ``limit``."""
    ids: list[int] = []
    for value in values:
        for raw in str(value).split(","):
            part = raw.strip()
            if not part:
                continue
            if not _DIGITS.fullmatch(part) or not 1 <= int(part) <= MAX_ID:
                return None
            ids.append(int(part))
            if len(ids) > limit:
                return None
    return ids


def control_characters(path: str, query: bytes) -> bool:
    """Whether the request's path or (percent-decoded) query holds a control character."""
    return bool(_CONTROL.search(path.encode("utf-8", "surrogateescape"))
                or _CONTROL.search(unquote_to_bytes(query.replace(b"+", b" "))))
