"""WebSub discovery (R-RSS-8): the hub and the canonical topic a feed names.

A publisher names its hub as ``<link rel="hub">`` (``atom:link`` in RSS) and
its own address as ``rel="self"``, or in HTTP ``Link`` headers (which the
WebSub recommendation prefers). A cheap scan of the document's head is enough:
both sit before the entries.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

_HEAD = 65536
#: the cursor keys the reader keeps them under (read back by ``rss.kind.hub``)
CURSOR_HUB = "websub_hub"
CURSOR_TOPIC = "websub_topic"
_LINK_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?link\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(rb"""([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_LINK_HEADER = re.compile(r"""<([^>]*)>\s*((?:;\s*[\w*-]+\s*=\s*(?:"[^"]*"|[^;,]*)\s*)*)""")
_REL = re.compile(r"""rel\s*=\s*(?:"([^"]*)"|([^;,\s]*))""", re.IGNORECASE)


def websub_links(body: bytes, headers: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(hub, self) named by the response, each an http(s) URL or None."""
    hub, topic = _from_header(headers.get("link", "") or headers.get("Link", ""))
    for match in _LINK_TAG.finditer(body[:_HEAD]):
        attrs = {m.group(1).lower(): (m.group(2) or m.group(3) or b"") for m in
                 _ATTR.finditer(match.group(0))}
        rels = attrs.get(b"rel", b"").lower().split()
        href = html.unescape(attrs.get(b"href", b"").decode("utf-8", "replace")).strip()
        if b"hub" in rels and hub is None:
            hub = _http(href)
        if b"self" in rels and topic is None:
            topic = _http(href)
    return hub, topic


def _from_header(value: str) -> tuple[str | None, str | None]:
    hub = topic = None
    for match in _LINK_HEADER.finditer(value):
        rel = _REL.search(match.group(2) or "")
        rels = (rel.group(1) or rel.group(2) or "").lower().split() if rel else []
        if "hub" in rels and hub is None:
            hub = _http(match.group(1).strip())
        if "self" in rels and topic is None:
            topic = _http(match.group(1).strip())
    return hub, topic


def _http(url: str) -> str | None:
    return url if re.match(r"^https?://[^\s/]+", url, re.IGNORECASE) and len(url) < 2000 \
        else None
