"""What to do with one listed entry, given what is stored: a pure decision.

The rules of R-DEDUP-3 … R-DEDUP-6, R-DEDUP-10 (revision cap) and R-DEDUP-11 in
one place, so that collection, push ingest, history import and re-parse all
decide the same way. The pipeline turns an :class:`Action` into storage writes.

An entry can be decided before it is cleaned: the pipeline remembers the content
hash each entry of a source produced (its listing memory), and an entry listed
again unchanged is decided on that remembered hash alone wherever the rules
allow it. Where they need the cleaned entry (to create it, to compare it lossily,
to apply the cap or revise it), :func:`decide` says so by returning None, and the
pipeline cleans the entry and asks again. The rules are written once, here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from tidings.identity.hashing import lossy_equal
from tidings.model import ItemState

#: R-DEDUP-10: content that changes on every fetch may revise an item this often
MAX_REVISIONS = 24


class Action(StrEnum):
    CREATE = "create"  # first time anyone lists this identity
    REVISE = "revise"  # the owner lists new content: a new version
    BASELINE = "baseline"  # imported history gets its first comparable hash (R-DEDUP-5)
    REDISCOVER = "rediscover"  # another source lists it: a discovery row only (R-DEDUP-3)
    UNCHANGED = "unchanged"  # a version we have seen before, or lossy-equal (R-DEDUP-4/6)
    CAPPED = "capped"  # the owner changed it again past the revision cap
    TOMBSTONED = "tombstoned"  # deleted on purpose; never comes back (R-DEDUP-11)


@dataclass(frozen=True, slots=True)
class Listed:
    """What is known of a listed entry when it is decided.

    ``hash`` is its content hash, or a prefix of it when only the listing memory's
    is known; ``title`` is None until the entry is cleaned. ``text`` is its
    ``hashing.comparable_text`` when lossy comparison matters, else "".
    """

    hash: str
    title: str | None = None
    text: str = ""

    @property
    def cleaned(self) -> bool:
        return self.title is not None


def decide(
    *,
    source_id: str,
    entry: Listed,
    existing: ItemState | None,
    existing_text: str | None,
    tombstoned: bool,
) -> Action | None:
    """The fate of one entry, or None when only the cleaned entry can tell.

    ``existing_text`` may be None when the caller knows it is not needed (no
    U+FFFD on either side); it is then never compared lossily. A cleaned entry
    always gets an action.
    """
    if tombstoned:
        return Action.TOMBSTONED
    if existing is None:
        return Action.CREATE if entry.cleaned else None
    if existing.source_id != source_id:
        return Action.REDISCOVER
    if existing.content_hash is None:
        return Action.BASELINE if entry.cleaned else None
    if _seen(entry.hash, existing):
        return Action.UNCHANGED
    if entry.title is None:
        return None
    if existing_text is not None and lossy_equal(entry.text, existing_text):
        return Action.UNCHANGED
    if existing.revisions >= MAX_REVISIONS and entry.title == existing.title:
        # Past the cap only a visible change (the title) still counts.
        return Action.CAPPED
    return Action.REVISE


def _seen(digest: str, existing: ItemState) -> bool:
    """Whether ``digest`` (a full hash, or the prefix a listing memory keeps) names a
    version of the item seen before (R-DEDUP-4)."""
    if not digest:
        return False
    if existing.content_hash is not None and existing.content_hash.startswith(digest):
        return True
    return any(known.startswith(digest) for known in existing.version_hashes)
