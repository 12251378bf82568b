"""What the compatibility APIs and feeds out ask of storage (R-API-2, R-API-3).

Part of the :class:`tidings.store.base.Storage` protocol, in its own module as
``access`` is: Google Reader and Fever clients ask for id lists, unread counts
and "mark everything before T as read"; feeds out need saved searches; Fever
authenticates with an MD5 key that is kept beside an API token (the token's
own value is never stored). Semantics as in ``base``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple, Protocol

from tidings.store.users import ApiToken

if TYPE_CHECKING:
    from tidings.store.base import ItemQuery


@dataclass(frozen=True, slots=True)
class SavedSearch:
    """A search kept under a name (R-API-5): listed in the reader, served as a feed."""

    id: int
    name: str
    query: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class UnreadCount:
    source_id: str
    count: int
    newest: datetime | None  # the newest unread item's sort time


class StreamEntry(NamedTuple):
    """One item of a client API's stream page, as read: only what the page shows,
    times as stored (µs since 1970), and the text already a JSON string. No source
    title: the page has its sources at hand, and a join per row cost a sixth of the
    read.

    A page holds up to 1,000 items with their bodies; building an :class:`Item`
    for each, then a dict, then decoding and re-encoding every body was most of
    what such a page cost (docs/benchmarks.md, issue 19).
    """

    id: int
    source_id: str
    title: str
    url: str | None
    author: str
    sort_us: int  # published, else discovered: the stream's order
    discovered_us: int
    updated_us: int
    read: int  # 0 or 1, as stored
    starred: int
    content_json: bytes  # the body, else the summary, as a JSON string (UTF-8)
    has_body: int  # 1: content_json is the (sanitized) body; 0: the plain-text summary


@dataclass(frozen=True, slots=True)
class WebSubLease:
    """A source's WebSub subscription (R-RSS-8): at which hub, for which topic, and how
    it stands: ``requested`` (waiting for the hub's challenge), ``active`` (verified,
    until ``lease_until``), ``failed`` (the hub refused or is down: polling as usual,
    tried again after ``retry_at``)."""

    source_id: str
    hub: str
    topic: str
    secret: str
    verify_token: str
    state: str
    requested_at: datetime
    lease_until: datetime | None = None
    last_push_at: datetime | None = None
    retry_at: datetime | None = None
    error: str | None = None


class CompatReads(Protocol):
    def item_refs(self, query: ItemQuery) -> list[tuple[int, datetime]]:
        """(id, sort time) of the items ``query`` selects, in its order, up to its limit:
        what id-only listings need, without reading a row of text."""
        ...

    def stream_entries(self, query: ItemQuery) -> list[StreamEntry]:
        """The items ``query`` selects, in its order, up to its limit, as stream entries:
        one query, no body decoded."""
        ...

    def unread_counts(self, editorial_only: bool) -> list[UnreadCount]:
        """Unread items per source that has any."""
        ...

    def list_saved_searches(self) -> list[SavedSearch]:
        """By name."""
        ...

    def get_saved_search(self, search_id: int) -> SavedSearch:
        """NotFoundError if there is none."""
        ...

    def find_token_by_fever_key(self, key: str) -> ApiToken | None:
        """The API token whose Fever key (MD5 of ``admin:<token>``) this is, if it
        still exists (a revoked token takes its key with it)."""
        ...


    def list_websub(self) -> list[WebSubLease]: ...
    def get_websub(self, source_id: str) -> WebSubLease | None: ...


class CompatWrites(Protocol):
    def set_read_where(self, query: ItemQuery, read: bool) -> int:
        """Mark every item ``query`` selects (whatever its limit and order) read or
        unread; returns how many changed."""
        ...

    def add_saved_search(self, name: str, query: str, created_at: datetime) -> SavedSearch:
        """ConfigError if the name is taken."""
        ...

    def delete_saved_search(self, search_id: int) -> bool: ...

    def set_fever_key(self, token_id: str, key: str) -> None:
        """Keep the Fever key of an API token (NotFoundError if the token is gone)."""
        ...

    def put_websub(self, lease: WebSubLease) -> None:
        """Insert or replace a source's subscription (NotFoundError if the source is gone)."""
        ...

    def delete_websub(self, source_id: str) -> bool: ...
