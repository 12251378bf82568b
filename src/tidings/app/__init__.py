"""The public facade (layer 5½): the only part of tidings that cli and web use.

``Tidings`` is one open archive; ``discover_feeds`` and ``extract_target`` work
without one. Types the outer layers need are re-exported here, so that they
never import the layers below.
"""

from typing import TYPE_CHECKING

from tidings.app.catalog import slugify
from tidings.app.crawling import CrawlLimits, Crawls
from tidings.app.facade import Tidings, utcnow
from tidings.app.ingest import MAX_ITEMS, IngestReport, ItemResult, PushedItem
from tidings.app.navigation import FolderEntry, MarkedRead, Sidebar, SourceEntry
from tidings.app.standalone import discover_feeds, extract_target
from tidings.net.listen import listen_socket
from tidings.pipeline.doctor import DoctorReport
from tidings.pipeline.extraction import ExtractReport
from tidings.pipeline.reparse import ReparseReport
from tidings.pipeline.round import RoundProgress, RoundReport
from tidings.schedule.ops import DiversityReport, HealthReport, SourceOverview
from tidings.schedule.runner import StopReason
from tidings.store.access import ApiToken, User, WebSession
from tidings.store.base import (
    UNSET,
    ArchiveStats,
    ItemQuery,
    SearchQuery,
    SourceStats,
    SourceUpdate,
)
from tidings.store.compat import StreamEntry
from tidings.store.crawl import Crawl, CrawlCounts, CrawlFinding, CrawlSite

if TYPE_CHECKING:  # article extraction loads on first use (see tidings.extract)
    from tidings.extract import Extraction

__all__ = [
    "MAX_ITEMS",
    "UNSET",
    "ApiToken",
    "ArchiveStats",
    "Crawl",
    "CrawlCounts",
    "CrawlFinding",
    "CrawlLimits",
    "CrawlSite",
    "Crawls",
    "DiversityReport",
    "DoctorReport",
    "ExtractReport",
    "Extraction",
    "FolderEntry",
    "HealthReport",
    "IngestReport",
    "ItemQuery",
    "ItemResult",
    "MarkedRead",
    "PushedItem",
    "ReparseReport",
    "RoundProgress",
    "RoundReport",
    "SearchQuery",
    "Sidebar",
    "SourceEntry",
    "SourceOverview",
    "SourceStats",
    "SourceUpdate",
    "StopReason",
    "StreamEntry",
    "Tidings",
    "User",
    "WebSession",
    "discover_feeds",
    "extract_target",
    "listen_socket",
    "slugify",
    "utcnow",
]
