"""Items, the read side: the shared methods (``tidings.store.sql.reading``) with
SQLite's search index told of the items they delete."""

from __future__ import annotations

from collections.abc import Sequence

from tidings.store.sql._base import SqlConn
from tidings.store.sql.reading import ItemsReadMixin as SharedItemsRead
from tidings.store.sqlite._db import Access
from tidings.store.sqlite._search import unindex


class ItemsReadMixin(SharedItemsRead, Access):

    def _unindex(self, conn: SqlConn, item_ids: Sequence[int]) -> None:
        unindex(conn, item_ids)
