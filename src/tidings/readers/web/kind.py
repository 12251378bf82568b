"""The ``web_list`` kind: a page without a feed, read by its declared rules (R-WEB-1..5).

Its entries have no GUIDs (they are their URLs, or explicit keys), so a new
source starts keyed by URL instead of degrading to it with a warning on its first
run. A page read through the paid rendering service (``mode = "markdown"``)
costs a paid render (R-SCHED-5 clamps it to 60 minutes at least). A page's
proposed list rules (``tidings add`` on a page without a feed) are for this kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tidings.model import CostClass, IdentityMode, SourceKind
from tidings.readers.kind import Kind
from tidings.readers.web.reader import WebListReader

WEB_LIST = SourceKind("web_list")


def cost(config: Mapping[str, Any]) -> CostClass:
    return CostClass.PAID_RENDER if config.get("mode") == "markdown" else CostClass.FREE


def identity(config: Mapping[str, Any]) -> IdentityMode:
    return IdentityMode.URL


KIND = Kind(name=WEB_LIST, reader=WebListReader, summary="a page without a feed",
            cost=cost, identity=identity, proposed=True)
