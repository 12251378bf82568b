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


def _keep(ch: str) -> bool:
    # Letters, marks and numbers stay; separators (incl. U+3000), punctuation,
    # symbols and control characters go.
    return unicodedata.category(ch)[0] in "LMN"


def title_fingerprint(title: str) -> str:
    """32 hex characters, or "" when the title has nothing left to compare."""
    folded = unicodedata.normalize("NFKC", title).casefold()
    core = "".join(ch for ch in folded if _keep(ch))
    if not core:
        return ""
    return hashlib.sha256(core.encode("utf-8")).hexdigest()[:32]
