"""Story clusters, as SQLite writes a placement (the rest: ``tidings.store.sql.stories``)."""

from __future__ import annotations

from collections.abc import Sequence

from tidings.store.sql.stories import StoriesMixin as SharedStories
from tidings.store.sql.stories import meaning_params, member_params
from tidings.store.sqlite._db import Access
from tidings.store.stories import StoryMember


class StoriesMixin(SharedStories, Access):
    def put_story_members(self, members: Sequence[StoryMember]) -> None:
        with self._write() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO story_members (cluster_id, similarity, matched, at, "
                "hashes, title_hashes, exact, latin_hashes, item_id) "
                "SELECT ?, ?, ?, ?, ?, ?, ?, ?, id FROM items WHERE id = ?",
                [member_params(m) for m in members])
            conn.executemany(
                "INSERT OR REPLACE INTO story_meaning (model, vector, marks, item_id) "
                "SELECT ?, ?, ?, id FROM items WHERE id = ?", meaning_params(members))
