"""Story clusters, as PostgreSQL writes a placement (the rest:
``tidings.store.sql.stories``)."""

from __future__ import annotations

from collections.abc import Sequence

from tidings.store.postgres._db import Access
from tidings.store.sql.stories import StoriesMixin as SharedStories
from tidings.store.sql.stories import meaning_params, member_params
from tidings.store.stories import StoryMember

# the parameters are typed (a NULL ``matched`` has no type of its own), and the item's
# row is locked (FOR KEY SHARE) so that an item deleted meanwhile is skipped, as a
# deleted one is, instead of failing the foreign key
_PUT = ("INSERT INTO story_members (cluster_id, similarity, matched, at, hashes, "
        "title_hashes, exact, latin_hashes, item_id) SELECT ?::bigint, ?::float8, ?::bigint, "
        "?::bigint, ?::bytea, ?::bytea, ?::bigint, ?::bytea, id FROM items WHERE id = ? "
        "FOR KEY SHARE ON CONFLICT (item_id) DO UPDATE SET cluster_id = excluded.cluster_id, "
        "similarity = excluded.similarity, matched = excluded.matched, at = excluded.at, "
        "hashes = excluded.hashes, title_hashes = excluded.title_hashes, "
        "exact = excluded.exact, latin_hashes = excluded.latin_hashes")
_PUT_MEANING = ("INSERT INTO story_meaning (model, vector, marks, item_id) "
                "SELECT ?::text, ?::bytea, ?::text, id FROM items WHERE id = ? FOR KEY SHARE "
                "ON CONFLICT (item_id) DO UPDATE SET model = excluded.model, "
                "vector = excluded.vector, marks = excluded.marks")


class StoriesMixin(SharedStories, Access):
    def put_story_members(self, members: Sequence[StoryMember]) -> None:
        with self._write() as conn:
            conn.executemany(_PUT, [member_params(m) for m in members])
            meanings = meaning_params(members)
            if meanings:
                conn.executemany(_PUT_MEANING, meanings)
