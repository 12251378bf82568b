"""The use cases (layer 5½): the only part of tidings that cli and web use.

``Tidings`` is one open archive, its use cases its attributes (``tidings.sources``,
``tidings.items``, ...: one module each, see ``facade.py``); ``discover_feeds``,
``extract_target``, ``check_backup`` and ``restore_backup`` work without one.
Types the outer layers need are re-exported here, so that they never import the
layers below.
"""

from typing import TYPE_CHECKING

from tidings.app.backups import check_backup, restore_backup
from tidings.app.core import utcnow
from tidings.app.crawling import CrawlLimits, Crawls
from tidings.app.facade import Tidings
from tidings.app.folders import Folder
from tidings.app.ingest import MAX_ITEMS, IngestReport, ItemResult, PushedItem
from tidings.app.naming import slugify
from tidings.app.navigation import FolderEntry, MarkedRead, Sidebar, SourceEntry
from tidings.app.passwords import MIN_PASSWORD, check_password, hash_password
from tidings.app.standalone import discover_feeds, extract_target
from tidings.net.listen import listen_socket
from tidings.pipeline.doctor import DoctorReport
from tidings.pipeline.extraction import ExtractReport
from tidings.pipeline.reparse import ReparseReport
from tidings.pipeline.round import RoundProgress, RoundReport
from tidings.schedule.ops import DiversityReport, HealthReport, SourceOverview
from tidings.schedule.runner import StopReason
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
from tidings.store.users import ApiToken, User, WebSession

if TYPE_CHECKING:  # article extraction loads on first use (see tidings.extract)
    from tidings.extract import Extraction

__all__ = [
    "MAX_ITEMS",
    "MIN_PASSWORD",
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
    "Folder",
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
    "check_backup",
    "check_password",
    "discover_feeds",
    "extract_target",
    "hash_password",
    "listen_socket",
    "restore_backup",
    "slugify",
    "utcnow",
]
