"""The runner's periodic jobs: adaptive intervals, webhook items, the weekly report.

Each is safe to run from several runners on one database: bookmarks are
swapped atomically (``Storage.swap_mark``), so the runner that wins a swap does
the once-only part and the others skip it.
"""

from __future__ import annotations

import logging
from datetime import datetime, tzinfo

from tidings.errors import NotFoundError
from tidings.model import Visibility
from tidings.pipeline import timing
from tidings.schedule import plan
from tidings.schedule.ops import health_report
from tidings.schedule.webhooks import WebhookEvent, WebhookSender, item_json
from tidings.store.base import Storage

log = logging.getLogger(__name__)

ITEMS_MARK = "webhook-items"
REPORT_MARK = "weekly-report"
ADAPT_MARK = "adapt-intervals"
ITEMS_PER_EVENT = 200


def adapt_intervals(store: Storage, now: datetime) -> dict[str, int]:
    """Recompute every source's interval from its last 7 days (R-SCHED-5); returns changes."""
    counts = store.new_item_counts(now, plan.ADAPT_WINDOW_DAYS)
    changes = plan.plan_intervals(store.list_sources(), counts)
    if changes:
        store.set_intervals(changes)
    log.info("adaptive intervals: %d sources changed", len(changes))
    return changes


def daily_maintenance(store: Storage, now: datetime, tz: tzinfo) -> bool:
    """The 04:20 job; False when another runner already did today's."""
    today = now.astimezone(tz).date().isoformat()
    previous = store.get_mark(ADAPT_MARK)
    if previous == today or not store.swap_mark(ADAPT_MARK, previous, today):
        return False
    adapt_intervals(store, now)
    store.abandon_stale_runs(timing.stale_runs_before(now), now)
    return True


def start_item_watermark(store: Storage) -> None:
    """On first start, webhooks begin with items created from now on, not the archive."""
    if store.get_mark(ITEMS_MARK) is None:
        store.swap_mark(ITEMS_MARK, None, str(store.max_item_id()))


def push_new_items(store: Storage, webhooks: WebhookSender) -> int:
    """Queue the new non-backfill items of editorial sources; returns how many."""
    mark = store.get_mark(ITEMS_MARK)
    if mark is None:
        start_item_watermark(store)
        return 0
    ids = store.new_item_ids(int(mark), ITEMS_PER_EVENT)
    if not ids or not store.swap_mark(ITEMS_MARK, mark, str(ids[-1])):
        return 0  # nothing new, or another runner took this batch
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


def _visibility(store: Storage, source_id: str) -> tuple[bool, str]:
    try:
        source = store.get_source(source_id)
    except NotFoundError:
        return True, ""
    return source.visibility is Visibility.EDITORIAL, source.title


def weekly_report(store: Storage, now: datetime, webhooks: WebhookSender | None) -> bool:
    """Build the health report once per ISO week across runners; log it and post it."""
    year, week, _ = now.isocalendar()
    this_week = f"{year}-W{week:02d}"
    previous = store.get_mark(REPORT_MARK)
    if previous == this_week or not store.swap_mark(REPORT_MARK, previous, this_week):
        return False
    report = health_report(store, now)
    log.info("weekly source health report\n%s", report.text())
    if webhooks is not None and webhooks.enabled:
        webhooks.submit(WebhookEvent("health_report",
                                     {"report": report.as_json(), "text": report.text()}))
    return True
