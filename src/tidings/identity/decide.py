"""What to do with one listed entry, given what is stored: a pure decision.

The rules of R-DEDUP-3 … R-DEDUP-6, R-DEDUP-10 (revision cap) and R-DEDUP-11 in
one place, so that collection, push ingest, history import and re-parse all
decide the same way. The pipeline turns an :class:`Action` into storage writes.
"""

from __future__ import annotations

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


def decide(
    *,
    source_id: str,
    new_hash: str,
    new_text: str,
    new_title: str,
    existing: ItemState | None,
    existing_text: str | None,
    tombstoned: bool,
) -> Action:
    """Decide the fate of one entry. ``*_text`` are ``hashing.comparable_text`` outputs.

    ``existing_text`` may be None when the caller knows it is not needed (no
    U+FFFD on either side); it is then never compared lossily.
    """
    if tombstoned:
        return Action.TOMBSTONED
    if existing is None:
        return Action.CREATE
    if existing.source_id != source_id:
        return Action.REDISCOVER
    if existing.content_hash is None:
        return Action.BASELINE
    if new_hash == existing.content_hash or new_hash in existing.version_hashes:
        return Action.UNCHANGED
    if existing_text is not None and lossy_equal(new_text, existing_text):
        return Action.UNCHANGED
    if existing.revisions >= MAX_REVISIONS and new_title == existing.title:
        # Past the cap only a visible change (the title) still counts.
        return Action.CAPPED
    return Action.REVISE
