"""Images extraction localized, kept in the archive itself (R-EXTRACT-4, cluster mode).

In cluster mode any web node serves ``/media`` while whichever worker extracted
an article fetched its images, so the images live in the database every node
reaches (``pipeline/media.py`` decides where they go). Names are content
addresses (``<h[:2]>/<h[2:4]>/<h>.<ext>``): a name is written once and never
changes meaning, so a second write of it is a no-op. One code for both backends
(BLOB / bytea).
"""

from __future__ import annotations

from datetime import datetime

from tidings.store.sql._base import Connected, to_us


class MediaMixin(Connected):
    def put_media(self, name: str, body: bytes, at: datetime) -> None:
        with self._write() as conn:
            conn.execute("INSERT INTO media (name, body, stored_at) VALUES (?, ?, ?) "
                         "ON CONFLICT (name) DO NOTHING", (name, body, to_us(at)))

    def get_media(self, name: str) -> bytes | None:
        with self._read() as conn:
            row = conn.execute("SELECT body FROM media WHERE name = ?", (name,)).fetchone()
        return None if row is None else bytes(row[0])  # bytea comes as a memoryview
