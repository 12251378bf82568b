"""Images in the archive (see the SQLite module of the same name: one statement each)."""

from __future__ import annotations

from datetime import datetime

from tidings.store.postgres._db import Access
from tidings.store.sqlite._media import get_media, put_media


class MediaMixin(Access):
    def put_media(self, name: str, body: bytes, at: datetime) -> None:
        with self._write() as conn:
            put_media(conn, name, body, at)

    def get_media(self, name: str) -> bytes | None:
        with self._read() as conn:
            return get_media(conn, name)
