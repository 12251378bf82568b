"""The ``rss`` kind: RSS, Atom, RDF and JSON Feed documents (R-RSS-1..9).

The kind autodiscovery finds (``tidings add`` of a page), exported in OPML. Its
reader leaves a feed's WebSub hub and topic in the cursor (R-RSS-8); :func:`hub`
is the one place that reads them back, for the subscriber.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tidings.model import SourceKind
from tidings.readers.kind import Kind
from tidings.readers.rss.reader import RssReader
from tidings.readers.rss.websub import CURSOR_HUB, CURSOR_TOPIC

RSS = SourceKind("rss")


def hub(cursor: Mapping[str, Any]) -> tuple[str, str] | None:
    """(hub, topic) the feed named at its last good fetch, or None."""
    named, topic = cursor.get(CURSOR_HUB), cursor.get(CURSOR_TOPIC)
    return (named, topic) if isinstance(named, str) and isinstance(topic, str) else None


KIND = Kind(name=RSS, reader=RssReader, summary="an RSS, Atom or JSON feed",
            opml=True, feed=True, hub=hub)
