"""``reparse``: feed parsing and body extraction again, over the raw archive (R-EXTRACT-5).

When parsing or extraction rules improve - or a source gets a better
``extract.body_selector`` - the archive already holds every response, so the
work is redone without a single request: this module takes storage (to read),
the writer (to write) and the settings, never a fetcher. Results go through
``upsert_items`` like live ones, so they are new versions by the owner's rules
and nothing else moves:

* feeds: each archived feed response of a source is parsed again (oldest
  first, the newest listing of an entry wins), rewritten and filtered with the
  source's current rules, and only entries that are stored items of that source
  are upserted - re-parsing never creates items that collection's limits kept
  out, and never records discoveries at today's date;
* pages: the newest successful archived page of each item is extracted again
  with the source's current overrides. Images are not downloaded: the local
  copies the current body points to are reused by original URL, any other
  image gets an empty ``src`` (as a failed download would). A page that now
  yields no article leaves an existing body alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol

import lxml.html
from lxml import etree

from tidings.errors import NotFoundError, TidingsError
from tidings.identity.decide import Action
from tidings.model import BodyState, ItemData, RawResponse, Source
from tidings.net import decode_text
from tidings.pipeline.config import Extract, Filters
from tidings.pipeline.extraction import page_item, run_extraction, store_page_item
from tidings.pipeline.reading import SourceRules, plan_listing
from tidings.pipeline.upsert import upsert_items
from tidings.settings import Settings
from tidings.store.archive import RawReads
from tidings.store.items import ItemReads, UpsertReads
from tidings.store.sources import SourceReads
from tidings.store.writer import Writer

BATCH = 500
MAX_ERRORS = 20


class ArchiveReads(RawReads, UpsertReads, ItemReads, SourceReads, Protocol):
    """What re-parsing reads: the raw archive, the items it may revise, their sources."""


@dataclass(slots=True)
class ReparseReport:
    feeds: int = 0  # archived feed responses parsed again
    pages: int = 0  # archived article pages extracted again
    revised: int = 0  # items that got a new version
    unchanged: int = 0  # items looked at whose content came out the same
    errors: list[str] = field(default_factory=list)  # the first few that no longer parse
    error_count: int = 0

    def error(self, message: str) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(message)

    def count(self, action: Action) -> None:
        if action is Action.REVISE:
            self.revised += 1
        elif action in (Action.UNCHANGED, Action.BASELINE):
            self.unchanged += 1


def _when(raw: RawResponse) -> str:
    return f"{raw.final_url or raw.url} ({raw.fetched_at:%Y-%m-%d %H:%M})"


def _content_type(headers: Mapping[str, str]) -> str:
    return next((v for k, v in headers.items() if k.lower() == "content-type"), "")


# ------------------------------------------------------------------- feeds


def _feed_entries(store: RawReads, settings: Settings, rules: SourceRules, source: Source,
                  since: datetime | None, report: ReparseReport
                  ) -> tuple[dict[str, ItemData], dict[str, datetime]]:
    """Newest listing of each entry, by identity key; and the newest good page per item."""
    entries: dict[str, ItemData] = {}
    pages: dict[str, datetime] = {}
    for raw in store.iter_raw(source_id=source.id, since=since):
        if not 200 <= raw.status < 300:
            continue
        if raw.item_key is not None:
            pages[raw.item_key] = raw.fetched_at
            continue
        try:
            result = rules.reader.parse_raw(source, raw)
        except TidingsError as exc:
            report.error(f"{_when(raw)}: {exc}")
            continue
        report.feeds += 1
        listing = plan_listing(settings, source, rules, result, raw.fetched_at, limited=False,
                               clean=False)
        for entry in listing.entries:
            if entry.key is not None and entry.stored is not None:
                # keyed as part of the listing it came from: the few upserted later
                # would key alone (a fragment dropped, a URL_TITLE entry re-keyed)
                entries[entry.key] = replace(entry.stored, key=entry.key, url=entry.url)
    return entries, pages


def _upsert_owned(store: UpsertReads, writer: Writer, settings: Settings, source: Source,
                  entries: dict[str, ItemData], now: datetime, report: ReparseReport) -> None:
    keys = list(entries)
    for start in range(0, len(keys), BATCH):
        part = keys[start:start + BATCH]
        stored = store.lookup_items(part)
        owned = [entries[k] for k in part if k in stored and stored[k].source_id == source.id]
        if not owned:
            continue
        outcome = writer.call(upsert_items, source, owned, now,
                              extra_tracking=settings.tracking_params)
        for action in outcome.actions.values():
            report.count(action)


# ------------------------------------------------------------------- pages


def _fragment(html: str) -> lxml.html.HtmlElement:
    return lxml.html.fragment_fromstring(html, create_parent="div")


def relink_images(html: str, current: str | None) -> str:
    """Point images at the local copies ``current`` already uses; no downloads offline."""
    if "<img" not in html:
        return html
    known: dict[str, str] = {}
    if current and "<img" in current:
        for img in _fragment(current).iter("img"):
            original, src = img.get("data-original-src"), img.get("src")
            if original and src:
                known[original] = src
    wrapper = _fragment(html)
    for img in wrapper.iter("img"):
        original = img.get("data-original-src") or img.get("src") or ""
        if original:
            img.set("data-original-src", original)
        img.set("src", known.get(original, ""))
    parts = [wrapper.text or ""]
    parts.extend(etree.tostring(child, encoding="unicode", method="html") for child in wrapper)
    return "".join(parts)


def _page_item(store: ItemReads, source: Source, options: Extract, raw: RawResponse,
               report: ReparseReport) -> ItemData | None:
    assert raw.item_key is not None
    try:
        item = store.get_item_by_key(raw.item_key)
    except NotFoundError:
        return None  # deleted since
    if item.source_id != source.id:
        return None
    url = raw.final_url or raw.url
    try:
        ext = run_extraction(decode_text(raw.body, _content_type(raw.headers)), url, options)
    except TidingsError as exc:
        report.error(f"{_when(raw)}: {exc}")
        return None
    report.pages += 1
    info = {"method": ext.method, "url": url, "at": raw.fetched_at.isoformat(),
            "chars": len(ext.text)}
    if ext.state is BodyState.OK:
        return page_item(item, ext, relink_images(ext.html, item.body), {"extract": info})
    reason = f"no article found ({len(ext.text)} characters of text, {ext.method})"
    return page_item(item, ext, None, {"extract_error": reason, "extract": info})


def _newest_pages(store: RawReads, source: Source, since: datetime | None,
                  newest: dict[str, datetime]) -> Iterator[RawResponse]:
    for raw in store.iter_raw(source_id=source.id, since=since):
        if raw.item_key is not None and newest.get(raw.item_key) == raw.fetched_at \
                and 200 <= raw.status < 300:
            newest.pop(raw.item_key)  # one page per item, even if two share a time
            yield raw


# -------------------------------------------------------------------- entry


def reparse_source(store: ArchiveReads, writer: Writer, settings: Settings, source: Source,
                   now: datetime, *, since: datetime | None = None,
                   filters: Filters | None = None) -> ReparseReport:
    report = ReparseReport()
    try:
        rules = SourceRules.of(source, filters)
    except TidingsError as exc:  # the source's config no longer validates
        report.error(f"{source.id}: {exc}")
        return report
    entries, newest = _feed_entries(store, settings, rules, source, since, report)
    _upsert_owned(store, writer, settings, source, entries, now, report)
    for raw in _newest_pages(store, source, since, newest):
        data = _page_item(store, source, rules.config.extract, raw, report)
        if data is not None:
            report.count(writer.call(store_page_item, settings, source, data, now))
    return report


def reparse(store: ArchiveReads, writer: Writer, settings: Settings, now: datetime, *,
            source_id: str | None = None, since: datetime | None = None,
            filters: Filters | None = None) -> ReparseReport:
    """Parse and extract again everything archived (of ``source_id``, since ``since``)."""
    sources = [store.get_source(source_id)] if source_id else store.list_sources()
    total = ReparseReport()
    for source in sources:
        one = reparse_source(store, writer, settings, source, now, since=since, filters=filters)
        total.feeds += one.feeds
        total.pages += one.pages
        total.revised += one.revised
        total.unchanged += one.unchanged
        total.error_count += one.error_count
        total.errors.extend(one.errors[:MAX_ERRORS - len(total.errors)])
    return total


__all__ = ["ReparseReport", "relink_images", "reparse", "reparse_source"]
