"""What a guarded fetch returns. Plain data; the fetching lives in ``client``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from tidings.net.body import Body


@dataclass(frozen=True, slots=True)
class Response:
    """A completed request, after redirects.

    ``status`` 304 (``not_modified``) is a normal outcome, not an error: the
    caller asked a conditional question and got its answer. Error statuses
    (4xx/5xx) are raised as :class:`tidings.errors.HTTPStatusError` unless the
    caller asked for them with ``raise_for_status=False``.
    """

    url: str  # as requested
    final_url: str  # after redirects
    status: int
    headers: Mapping[str, str]  # lower-cased names; repeated headers joined by ", "
    body: Body  # as received; ``content`` is the decoded body, at most the byte cap
    fetched_at: datetime
    elapsed: float  # seconds, DNS to last byte
    redirects: tuple[str, ...] = field(default=())  # every URL that answered 3xx

    @property
    def content(self) -> bytes:
        """The decoded body (decoded now if the fetch deferred it; may raise FetchError)."""
        return self.body.content()

    @property
    def not_modified(self) -> bool:
        return self.status == 304

    @property
    def etag(self) -> str | None:
        return self.headers.get("etag")

    @property
    def last_modified(self) -> str | None:
        return self.headers.get("last-modified")

    @property
    def content_type(self) -> str:
        """The media type without parameters, lower-cased ('' when absent)."""
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()
