"""Content hashes and lossy text comparison (R-DEDUP-4, R-DEDUP-6).

The hash decides whether an item was revised, so it must ignore what does not
change the meaning (runs of whitespace, composed vs decomposed characters) and
nothing else. Lossy comparison exists for feeds that drop random characters on
every load: the decoder turns what it lost into U+FFFD, and a text with a hole
where the other has a character is the same version.
"""

from __future__ import annotations

import hashlib
import unicodedata

from tidings.textutil import collapse_ws

__all__ = ["REPLACEMENT", "comparable_text", "content_hash", "is_lossy", "lossy_equal"]

REPLACEMENT = "\ufffd"


def _norm(text: str | None) -> str:
    if not text:
        return ""
    return collapse_ws(unicodedata.normalize("NFC", text))


def comparable_text(title: str, body: str | None, summary: str) -> str:
    """The text that is hashed: each part NFC, whitespace collapsed, one per line.

    The parts are joined with a newline (which cannot occur inside a part after
    collapsing), so moving text from the title into the summary changes the hash.
    """
    return "\n".join((_norm(title), _norm(body), _norm(summary)))


def content_hash(title: str, body: str | None, summary: str) -> str:
    """Hex sha256 of :func:`comparable_text`."""
    return hashlib.sha256(comparable_text(title, body, summary).encode("utf-8")).hexdigest()


def is_lossy(title: str, body: str | None, summary: str) -> bool:
    """Whether a text holds U+FFFD, so that comparing it takes :func:`lossy_equal`.

    Stored with the item: deciding on a re-listing then needs the stored body only
    when one side is lossy, and most re-listings need no body at all.
    """
    return REPLACEMENT in title or REPLACEMENT in summary or (
        body is not None and REPLACEMENT in body)


def _holes(text: str) -> list[int]:
    positions: list[int] = []
    pos = text.find(REPLACEMENT)
    while pos >= 0:
        positions.append(pos)
        pos = text.find(REPLACEMENT, pos + 1)
    return positions


def lossy_equal(a: str, b: str) -> bool:
    """Equal when U+FFFD in either text may stand for any one character.

    Linear time: lengths first, then the stretches between replacement
    characters are compared as slices (in C), not character by character.
    Pass texts normalized the same way (e.g. :func:`comparable_text`).
    """
    if len(a) != len(b):
        return False
    if a == b:
        return True
    holes = sorted(set(_holes(a)) | set(_holes(b)))
    if not holes:
        return False
    start = 0
    for pos in holes:
        if a[start:pos] != b[start:pos]:
            return False
        start = pos + 1
    return a[start:] == b[start:]
