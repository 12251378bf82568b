"""The runner's periodic jobs: adaptive intervals, webhook items, the weekly report, the
search index.

Each is safe to run from several runners on one database: bookmarks are
swapped atomically (``swap_mark``) inside the job's own write step, so the
runner that wins a swap does the once-only part and the others skip it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, time, tzinfo
from typing import Protocol

from tidings.errors import NotFoundError
from tidings.model import Visibility
from tidings.pipeline import holders, timing
from tidings.pipeline.extraction import prune_archive
from tidings.schedule import plan
from tidings.schedule.ops import ReportReads, health_report
from tidings.schedule.webhooks import WebhookEvent, WebhookSender, item_json
from tidings.settings import Settings
from tidings.store.archive import RawWrites
from tidings.store.items import ItemReads
from tidings.store.ops import OpsUnit
from tidings.store.searchindex import IndexDoc, SearchIndexReads, SearchIndexWrites
from tidings.store.sources import SourceReads
from tidings.store.writer import Writer

log = logging.getLogger(__name__)

ITEMS_MARK = "webhook-items"
REPORT_MARK = "weekly-report"
ADAPT_MARK = "adapt-intervals"
ITEMS_PER_EVENT = 200
#: items indexed per batch: read and built away from the writer, then one short write
#: step; a search's catch-up is one such batch, so a search never waits long on a backlog
INDEX_BATCH = 500


class Adapting(OpsUnit, SourceReads, Protocol):
    """What adapting intervals asks of storage: the sources, their figures, the swap."""


class Maintenance(Adapting, RawWrites, Protocol):
    """The daily job's unit: intervals, dead holders' leases, the raw archive pruned."""


class _NewItems(ItemReads, SourceReads, Protocol):
    """What a webhook's items are read from: the items, and their sources' visibility."""


def adapt_intervals(unit: Adapting, now: datetime) -> dict[str, int]:
    """Recompute every source's interval from its last 7 days (R-SCHED-5); returns changes."""
    counts = unit.new_item_counts(now, timing.ADAPT_WINDOW_DAYS)
    changes = plan.plan_intervals(unit.list_sources(), counts)
    if changes:
        unit.set_intervals(changes)
    log.info("adaptive intervals: %d sources changed", len(changes))
    return changes


def daily_maintenance(unit: Maintenance, settings: Settings, now: datetime, tz: tzinfo) -> bool:
    """The 04:20 job, one unit of work; False when another runner already did today's."""
    today = now.astimezone(tz).date().isoformat()
    previous = unit.get_mark(ADAPT_MARK)
    if previous == today or not unit.swap_mark(ADAPT_MARK, previous, today):
        return False
    adapt_intervals(unit, now)
    holders.recover(unit, now)
    prune_archive(unit, settings, now)
    return True


def _write_index(unit: SearchIndexWrites, docs: list[IndexDoc]) -> int:
    return unit.write_index(docs)


async def index_batch(store: SearchIndexReads, writer: Writer) -> int:
    """Index one batch: read it and build its documents on a thread (the CPU of
    indexing, ~90% of it), then hand the writer only the write; returns how many
    were stored (0 when nothing waits, or every item changed in between)."""
    inputs = await asyncio.to_thread(store.index_inputs, INDEX_BATCH)
    if not inputs:
        return 0
    docs = await asyncio.to_thread(store.build_index, inputs)
    return await writer(_write_index, docs)


async def index_pending(store: SearchIndexReads, writer: Writer) -> int:
    """Bring the search index up to date a batch at a time (the runners' job and the
    commands'); returns how many items were indexed. A batch that stored nothing
    ends the run: what changed meanwhile waits for the next one."""
    total = 0
    while (n := await index_batch(store, writer)) > 0:
        total += n
    return total


def start_item_watermark(unit: OpsUnit) -> None:
    """On first start, webhooks begin with items created from now on, not the archive."""
    if unit.get_mark(ITEMS_MARK) is None:
        unit.swap_mark(ITEMS_MARK, None, str(unit.max_item_id()))


def _take_new_items(unit: OpsUnit) -> list[int]:
    """The next batch of new non-backfill item ids, claimed for this runner."""
    mark = unit.get_mark(ITEMS_MARK)
    if mark is None:
        start_item_watermark(unit)
        return []
    ids = unit.new_item_ids(int(mark), ITEMS_PER_EVENT)
    if not ids or not unit.swap_mark(ITEMS_MARK, mark, str(ids[-1])):
        return []  # nothing new, or another runner took this batch
    return ids


async def push_new_items(store: _NewItems, writer: Writer, webhooks: WebhookSender) -> int:
    """Queue the new non-backfill items of editorial sources; returns how many."""
    ids = await writer(_take_new_items)
    visible: dict[str, tuple[bool, str]] = {}
    payload = []
    for item_id in ids:
        try:
            item = store.get_item(item_id)
        except NotFoundError:
            continue  # deleted in between
        if item.source_id not in visible:
            visible[item.source_id] = _visibility(store, item.source_id)
        shown, title = visible[item.source_id]
        if shown:
            payload.append(item_json(item, title))
    if payload:
        webhooks.submit(WebhookEvent("items", {"items": payload}))
    return len(payload)


def _visibility(store: SourceReads, source_id: str) -> tuple[bool, str]:
    try:
        source = store.get_source(source_id)
    except NotFoundError:
        return True, ""
    return source.visibility is Visibility.EDITORIAL, source.title


def _claim_week(unit: OpsUnit, this_week: str) -> bool:
    previous = unit.get_mark(REPORT_MARK)
    return previous != this_week and unit.swap_mark(REPORT_MARK, previous, this_week)


async def weekly_report(store: ReportReads, writer: Writer, now: datetime,
                        webhooks: WebhookSender | None) -> bool:
    """Build the health report once per ISO week across runners; log it and post it."""
    year, week, _ = now.isocalendar()
    if not await writer(_claim_week, f"{year}-W{week:02d}"):
        return False
    report = health_report(store, now)
    log.info("weekly source health report\n%s", report.text())
    if webhooks is not None and webhooks.enabled:
        webhooks.submit(WebhookEvent("health_report",
                                     {"report": report.as_json(), "text": report.text()}))
    return True


@dataclass(slots=True)
class Calendar:
    """When the daily and the weekly job are next due, in the runner's time zone."""

    tz: tzinfo
    daily_at: time
    weekly_on: int
    weekly_at: time
    next_daily: datetime
    next_weekly: datetime

    @classmethod
    def starting(cls, now: datetime, tz: tzinfo, daily_at: time, weekly_on: int,
                 weekly_at: time) -> Calendar:
        return cls(tz, daily_at, weekly_on, weekly_at, plan.next_daily(now, daily_at, tz),
                   plan.next_weekly(now, weekly_on, weekly_at, tz))

    def daily_due(self, now: datetime) -> bool:
        if now < self.next_daily:
            return False
        self.next_daily = plan.next_daily(now, self.daily_at, self.tz)
        return True

    def weekly_due(self, now: datetime) -> bool:
        if now < self.next_weekly:
            return False
        self.next_weekly = plan.next_weekly(now, self.weekly_on, self.weekly_at, self.tz)
        return True
