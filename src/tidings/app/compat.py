"""``Tidings.compat``: what feeds out and the client APIs (Google Reader, Fever) read
and write beyond the JSON API: id lists, unread counts, "read up to", saved
searches and the Fever keys of API tokens (R-API-2, R-API-3).

Reads are plain methods; writes go through the writer, as everywhere.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime

from tidings.errors import ConfigError
from tidings.store.base import ItemQuery
from tidings.store.compat import CompatReads, SavedSearch, StreamEntry, UnreadCount
from tidings.store.query_syntax import parse_search
from tidings.store.users import ApiToken
from tidings.store.writer import Writer

#: the one user name the client APIs know (the admin's)
CLIENT_USER = "admin"
MAX_SEARCH_NAME = 100


def fever_key(token_value: str, user: str = CLIENT_USER) -> str:
    """What a Fever client sends as ``api_key``: MD5 of ``user:password``. The
    protocol's choice, not ours; the "password" is a random API token, so the MD5
    of it tells nothing."""
    return hashlib.md5(f"{user}:{token_value}".encode(), usedforsecurity=False).hexdigest()


class Compat:
    """See the module docstring."""

    def __init__(self, store: CompatReads, writer: Writer, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._writer = writer
        self.clock = clock

    def item_refs(self, query: ItemQuery) -> list[tuple[int, datetime]]:
        return self._store.item_refs(query)

    def stream_entries(self, query: ItemQuery) -> list[StreamEntry]:
        return self._store.stream_entries(query)

    def unread_counts(self, editorial_only: bool) -> list[UnreadCount]:
        return self._store.unread_counts(editorial_only)

    async def set_read_where(self, query: ItemQuery, read: bool = True) -> int:
        changed: int = await self._writer(lambda unit: unit.set_read_where(query, read))
        return changed

    # -- saved searches
    def saved_searches(self) -> list[SavedSearch]:
        return self._store.list_saved_searches()

    def saved_search(self, search_id: int) -> SavedSearch:
        return self._store.get_saved_search(search_id)

    async def save_search(self, name: str, query: str) -> SavedSearch:
        """Keep a search under a name; the query must parse (ConfigError says why)."""
        name = " ".join(name.split())
        if not name or len(name) > MAX_SEARCH_NAME:
            raise ConfigError(f"name: 1 to {MAX_SEARCH_NAME} characters")
        parse_search(query)
        now = self.clock()
        saved: SavedSearch = await self._writer(
            lambda unit: unit.add_saved_search(name, query.strip(), now))
        return saved

    async def delete_search(self, search_id: int) -> bool:
        return await self._writer(lambda unit: unit.delete_saved_search(search_id))

    # -- Fever keys
    async def remember_fever_key(self, token_id: str, token_value: str) -> None:
        key = fever_key(token_value)
        await self._writer(lambda unit: unit.set_fever_key(token_id, key))

    def token_by_fever_key(self, key: str) -> ApiToken | None:
        return self._store.find_token_by_fever_key(key.strip().lower())
