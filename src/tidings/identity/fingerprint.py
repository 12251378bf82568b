"""Title fingerprints (R-DEDUP-8): the key that folds reprints in views.

A reprint usually differs from the original only in case, spacing and
punctuation (half-width vs full-width, 「」 vs “”, a trailing ！), so those are
removed before hashing. NFKC first folds full-width Latin letters and digits
into their ASCII forms, so "ＧＰＴ－５" and "GPT-5" meet.
"""

from __future__ import annotations

import hashlib
import unicodedata

__all__ = ["title_fingerprint"]


class _Dropped(dict[int, int | None]):
    """A ``str.translate`` table that deletes what a fingerprint ignores.

    Letters, marks and numbers stay; separators (incl. U+3000), punctuation,
    symbols and control characters go. Each code point's category is looked up
    once, the first time it is seen; after that the whole title is one C-level
    ``translate`` instead of a Python call per character.
    """

    def __missing__(self, code: int) -> int | None:
        kept = unicodedata.category(chr(code))[0] in "LMN"
        value = code if kept else None
        self[code] = value
        return value


_DROPPED = _Dropped()


def title_fingerprint(title: str) -> str:
    """32 hex characters, or "" when the title has nothing left to compare."""
    folded = unicodedata.normalize("NFKC", title).casefold()
    core = folded.translate(_DROPPED)
    if not core:
        return ""
    return hashlib.sha256(core.encode("utf-8")).hexdigest()[:32]
