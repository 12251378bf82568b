"""What the archive keeps besides items: the fetched responses items were parsed
from (R-EXTRACT-5), and localized images (cluster mode).

Part of the :class:`tidings.store.base.Storage` protocol, in its own module as
``ops`` is.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Protocol

from tidings.model import RawResponse


class RawReads(Protocol):
    def iter_raw(
        self, source_id: str | None = None, since: datetime | None = None,
        item_key: str | None = None,
    ) -> Iterator[RawResponse]:
        """Oldest first."""
        ...


class RawWrites(Protocol):
    def put_raw(self, raw: RawResponse) -> int: ...
    def prune_raw(self, before: datetime) -> int:
        """Drop raw responses older than ``before``, except the newest page of each
        stored item (the one its current body came from)."""
        ...


class MediaReads(Protocol):
    def get_media(self, name: str) -> bytes | None:
        """The image stored under ``name`` (``<h[:2]>/<h[2:4]>/<h>.<ext>``), or None."""
        ...


class MediaWrites(Protocol):
    def put_media(self, name: str, body: bytes, at: datetime) -> None:
        """Keep an image under its content address (a name stored already: no-op)."""
        ...
