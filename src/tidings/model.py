"""Domain objects: frozen dataclasses and enums, no I/O.

Two families are kept apart on purpose (as in lemon24/reader): what a source
*said* (:class:`ItemData`, produced by a reader from one response) and what we
*know* (:class:`Item`, produced by storage, with first-seen time, versions and
read state). Readers only ever build the first; only storage builds the second.

All datetimes are timezone-aware UTC.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from enum import StrEnum
from typing import Any, NewType

JSON = dict[str, Any]


#: a source kind's name ("rss", "x"...): an open set, because a kind is whatever a
#: reader module declares (``tidings.readers.kind``), installed packages' kinds included
SourceKind = NewType("SourceKind", str)


class Visibility(StrEnum):
    EDITORIAL = "editorial"  # shown
    ISOLATED = "isolated"  # stored, never shown in public views


class Health(StrEnum):
    OK = "ok"
    DEGRADED = "degraded"  # at least one failure
    FAILING = "failing"  # five or more consecutive failures


class CostClass(StrEnum):
    FREE = "free"
    PAID_LIST = "paid_list"
    PAID_RENDER = "paid_render"
    HOT_SIGNAL = "hot_signal"


class BodyState(StrEnum):
    OK = "ok"  # we have the real text
    PENDING = "pending"  # not tried yet
    UNCONFIRMED = "unconfirmed"  # tried, could not get it


class IdentityMode(StrEnum):
    """How a source's entries are keyed when no explicit key is given (R-DEDUP-10)."""

    GUID = "guid"
    URL = "url"
    URL_TITLE = "url_title"


class RunOutcome(StrEnum):
    RUNNING = "running"
    OK = "ok"
    NOT_MODIFIED = "not_modified"
    FAILED = "failed"
    BUDGET = "budget"  # our own budget was exhausted (R-SCHED-3)
    ABANDONED = "abandoned"  # process stopped before the run ended


@dataclass(frozen=True, slots=True)
class Source:
    """A thing we read, as stored."""

    id: str
    kind: SourceKind
    url: str
    title: str = ""
    config: Mapping[str, Any] = field(default_factory=dict)
    visibility: Visibility = Visibility.EDITORIAL
    interval_min: int = 30
    next_fetch_at: datetime | None = None
    fail_count: int = 0
    health: Health = Health.OK
    cursor: Mapping[str, Any] = field(default_factory=dict)
    cost_class: CostClass = CostClass.FREE
    identity_mode: IdentityMode = IdentityMode.GUID
    priority: int = 0  # higher goes first when a tick is full
    muted_reason: str | None = None  # e.g. "410 Gone"; muted sources are not fetched
    created_at: datetime | None = None
    last_success_at: datetime | None = None
    last_error: str | None = None
    site_url: str | None = None
    folder: str | None = None  # the one folder (category) a source is filed under


@dataclass(frozen=True, slots=True)
class ItemData:
    """One entry as a reader parsed it from a source's response."""

    title: str = ""
    url: str | None = None
    guid: str | None = None
    key: str | None = None  # explicit identity key (x:…, url:…#anchor, wx:…)
    summary: str = ""
    body: str | None = None  # HTML as the source gave it (sanitized by the pipeline)
    body_state: BodyState = BodyState.PENDING
    published_at: datetime | None = None
    published_raw: str | None = None
    updated_at: datetime | None = None
    author: str = ""
    categories: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)
    backfill: bool | None = None  # declared history (R-INGEST-4)


@dataclass(frozen=True, slots=True)
class Item:
    """An item as stored: one per identity key."""

    id: int
    key: str
    source_id: str
    title: str
    url: str | None
    summary: str
    body: str | None
    body_state: BodyState
    published_at: datetime | None
    discovered_at: datetime
    updated_at: datetime
    author: str = ""
    categories: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)
    content_hash: str = ""
    title_fp: str = ""
    backfill: bool = False
    revisions: int = 0
    read: bool = False
    starred: bool = False
    source_title: str = ""

    def brief(self) -> ItemBrief:
        """This item as a list row (see :class:`ItemBrief`)."""
        return ItemBrief(**{name: getattr(self, name) for name in _BRIEF_FIELDS})


@dataclass(slots=True)
class ItemBrief:
    """An item as a list row shows it: no body, summary, identity key or raw JSON.

    Lists and reprint groups read many items and show a line of each; loading
    the text they never show was most of what a list page cost. The fields are
    those of :class:`Item` with the same meaning. Not frozen: a frozen dataclass
    spends most of its construction setting fields one by one, and every list
    page builds a page of these.
    """

    id: int
    source_id: str
    title: str
    url: str | None
    published_at: datetime | None
    discovered_at: datetime
    author: str = ""
    body_state: BodyState = BodyState.PENDING
    title_fp: str = ""
    backfill: bool = False
    read: bool = False
    starred: bool = False
    source_title: str = ""


_BRIEF_FIELDS = tuple(f.name for f in fields(ItemBrief))


@dataclass(frozen=True, slots=True)
class ItemState:
    """What the dedup decisions need to know about an existing item (from storage)."""

    id: int
    key: str
    source_id: str
    title: str
    summary: str
    body: str | None
    body_state: BodyState
    content_hash: str | None
    version_hashes: frozenset[str]
    revisions: int
    published_at: datetime | None
    discovered_at: datetime
    url: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)
    lossy: bool = False  # the stored text holds U+FFFD (see identity.hashing)


@dataclass(frozen=True, slots=True)
class RawResponse:
    """A fetched response kept for re-parsing (R-EXTRACT-5)."""

    url: str
    final_url: str
    fetched_at: datetime
    status: int
    headers: Mapping[str, str]
    body: bytes
    source_id: str | None = None
    item_key: str | None = None


@dataclass(frozen=True, slots=True)
class RunCounts:
    """What a finished run reports; written onto its fetch-run row."""

    outcome: RunOutcome
    found: int = 0
    created: int = 0
    revised: int = 0
    rediscovered: int = 0
    filtered: int = 0
    pages: int = 0
    backlog: int = 0
    reused: int = 0
    error: str | None = None
    http_status: int | None = None
    bytes: int = 0
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchRun(RunCounts):
    """One attempt to collect one source (R-SCHED-8): its counts, and when and for whom."""

    id: int
    source_id: str
    started_at: datetime
    finished_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class FeedCandidate:
    """A feed found on a page by autodiscovery (R-DISC-1)."""

    url: str
    title: str = ""
    type: str = ""  # rss, atom, json, rdf
    score: int = 0
    verified: bool = False


@dataclass(frozen=True, slots=True)
class PaidCall:
    """One call to a paid API, as the spend ledger keeps it (R-SCHED-3).

    ``status`` is ``ok``, or ``failed: <reason>``: a failed call may still be
    billed, so it counts against the budget like any other.
    """

    provider: str
    purpose: str  # what the call was for: "search", "list", "article"...
    source_ids: tuple[str, ...]
    status: str
    cost: float  # in the provider's unit of money; 0.0 when only calls are counted
    duration_ms: int
    called_at: datetime


@dataclass(frozen=True, slots=True)
class ProviderTrouble:
    """A paid API's provider-wide problem (a refused key, no balance, rate limited,
    down): what it is, since when, and until when no call is sent to it.

    Stored, like the spend, so that every process on the archive holds back alike
    and the next command still shows it; it ends when a call succeeds again.
    """

    provider: str
    reason: str
    since: datetime
    until: datetime


@dataclass(frozen=True, slots=True)
class Spend:
    """What a provider's calls came to over a period."""

    calls: int = 0
    cost: float = 0.0


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result: the item as a list row shows it, and where it matched."""

    item: ItemBrief
    snippet: str = ""  # HTML-escaped text with <mark> around matches
    rank: float = 0.0
