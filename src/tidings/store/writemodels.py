"""What a write hands storage: new items, revisions, discoveries, a batch of them,
and a source's changes (fields left ``UNSET`` stay as they are)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from enum import Enum
from typing import Any, Literal

from tidings.model import (
    BodyState,
    CostClass,
    Health,
    IdentityMode,
    Visibility,
)


@dataclass(frozen=True, slots=True)
class ItemFields:
    """The content of an item as the pipeline wants it stored."""

    title: str
    url: str | None
    summary: str
    body: str | None
    body_state: BodyState
    published_at: datetime | None
    author: str = ""
    categories: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)
    content_hash: str | None = None  # None: imported history without a comparable hash
    title_fp: str = ""
    #: the text holds U+FFFD, so comparing it needs the lossy rule (identity decides
    #: this; storage keeps the flag so that ``lookup_items`` returns the bodies that
    #: comparison reads without being asked for them)
    lossy: bool = False


@dataclass(frozen=True, slots=True)
class NewItem:
    key: str
    source_id: str
    fields: ItemFields
    discovered_at: datetime
    backfill: bool


@dataclass(frozen=True, slots=True)
class Revision:
    """A new version of an existing item, from its owner (R-DEDUP-4)."""

    item_id: int
    fields: ItemFields
    revised_at: datetime  # becomes updated_at and the version's time
    counts_as_revision: bool = True  # False for a baseline hash (R-DEDUP-5)


@dataclass(frozen=True, slots=True)
class Discovery:
    """Source ``source_id`` listed item ``item_id`` (or the item being created) at ``seen_at``."""

    source_id: str
    seen_at: datetime
    item_id: int | None = None
    key: str | None = None  # when the item is created in the same batch


@dataclass(frozen=True, slots=True)
class UpsertBatch:
    creates: Sequence[NewItem] = ()
    revisions: Sequence[Revision] = ()
    discoveries: Sequence[Discovery] = ()


class Unset(Enum):
    """The value of a :class:`SourceUpdate` field that is not to change."""

    UNSET = "unset"


UNSET: Literal[Unset.UNSET] = Unset.UNSET


@dataclass(frozen=True, slots=True)
class SourceUpdate:
    """The fields of a source to change; every field left ``UNSET`` keeps its value.

    Typed, rather than a dict of names, so that a misspelt field or a value of the
    wrong type is a type error where the update is written, not a failure inside
    whichever backend stores it.
    """

    url: str | Unset = UNSET
    title: str | Unset = UNSET
    config: Mapping[str, Any] | Unset = UNSET
    visibility: Visibility | Unset = UNSET
    interval_min: int | Unset = UNSET
    next_fetch_at: datetime | Unset | None = UNSET
    fail_count: int | Unset = UNSET
    health: Health | Unset = UNSET
    cursor: Mapping[str, Any] | Unset = UNSET
    cost_class: CostClass | Unset = UNSET
    identity_mode: IdentityMode | Unset = UNSET
    priority: int | Unset = UNSET
    muted_reason: str | Unset | None = UNSET
    last_success_at: datetime | Unset | None = UNSET
    last_error: str | Unset | None = UNSET
    site_url: str | Unset | None = UNSET
    folder: str | Unset | None = UNSET

    def changes(self) -> dict[str, Any]:
        """The fields that are set, by name (those of :class:`~tidings.model.Source`)."""
        return {f.name: value for f in fields(self)
                if (value := getattr(self, f.name)) is not UNSET}

    def __bool__(self) -> bool:
        return bool(self.changes())
