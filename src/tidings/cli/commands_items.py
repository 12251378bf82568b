"""Commands that read the archive: items, search."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TextIO

import click
from rich.progress import Progress

from tidings.app import ItemQuery
from tidings.app.paging import decode_cursor, encode_cursor
from tidings.cli import Context, cli, fail, handle_errors, print_json, run_async, to_jsonable
from tidings.cli.infiles import cannot_write
from tidings.cli.tables import Column, print_table
from tidings.dates import utc_instant
from tidings.errors import BadValueError
from tidings.model import Item, ItemBrief, SearchHit
from tidings.textutil import plural


def parse_since(text: str | None) -> datetime | None:
    """``2024-05-01``, an ISO time, or a relative age like ``3d`` / ``12h``."""
    if not text:
        return None
    units = {"d": "days", "h": "hours", "m": "minutes", "w": "weeks"}
    if text[-1:] in units and text[:-1].isdigit():
        try:
            return datetime.now(UTC) - timedelta(**{units[text[-1]]: int(text[:-1])})
        except (OverflowError, ValueError):
            raise BadValueError(f"--since {text!r}: that is before the year 1; "
                              "give a smaller age or a date") from None
    try:
        return utc_instant(datetime.fromisoformat(text))
    except ValueError as exc:
        raise BadValueError(f"--since {text!r}: use a date (2024-05-01) or an age (3d, 12h)") \
            from exc


def _item_row(item: Item) -> dict[str, object]:
    return {
        "id": item.id, "key": item.key, "source": item.source_id, "title": item.title,
        "url": item.url, "published_at": item.published_at,
        "discovered_at": item.discovered_at, "author": item.author,
        "body_state": item.body_state, "backfill": item.backfill, "read": item.read,
        "starred": item.starred, "summary": item.summary, "cursor": encode_cursor(item),
    }


def _export_row(item: Item) -> dict[str, object]:
    """Everything an item holds, for ``tidings export``."""
    return {**_item_row(item), "body": item.body, "updated_at": item.updated_at,
            "categories": list(item.categories), "images": list(item.images),
            "raw": dict(item.raw), "content_hash": item.content_hash,
            "revisions": item.revisions, "source_title": item.source_title}


#: ``tidings items`` and ``tidings search``: the title wraps (two lines at most)
ITEM_COLUMNS = (Column("id", right=True), Column("when"), Column("source"),
                Column("title", wide=True, lines=2))


def _print_items(items: Sequence[Item | ItemBrief]) -> None:
    print_table(ITEM_COLUMNS, [
        [str(item.id), f"{item.published_at or item.discovered_at:%Y-%m-%d %H:%M}",
         item.source_id, item.title or item.url or ""] for item in items])


@cli.command()
@click.option("--source", "source_id", help="Only this source's items.")
@click.option("--since", help="Only items newer than this (2024-05-01, 3d, 12h).")
@click.option("--before", "cursor", metavar="CURSOR",
              help="Continue after this item (the cursor the previous page ended with).")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def items(ctx: Context, source_id: str | None, since: str | None, cursor: str | None,
          limit: int, as_json: bool) -> None:
    """List items, newest first; page on with --before."""
    before = decode_cursor(cursor)
    tidings = ctx.open()
    try:
        if source_id:
            tidings.sources.get(source_id)
        found = tidings.items.query(ItemQuery(source_id=source_id, since=parse_since(since),
                                              before=before, limit=limit))
    finally:
        tidings.close()
    if as_json:
        print_json([_item_row(i) for i in found])
        return
    _print_items(found)
    if len(found) == limit:
        click.echo(f"more: tidings items --before {encode_cursor(found[-1])}", err=True)


@cli.command()
@click.option("--source", "source_id", help="Only this source's items.")
@click.option("--since", help="Only items newer than this (2024-05-01, 3d, 12h).")
@click.option("--out", "out", type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="Write to this file (default: standard output).")
@click.pass_obj
@handle_errors
def export(ctx: Context, source_id: str | None, since: str | None, out: Path | None) -> None:
    """Every item, newest first, as JSON lines (one object per line, bodies included)."""
    newer = parse_since(since)
    show = out is not None and sys.stderr.isatty()
    tidings = ctx.open()
    try:
        pages = tidings.transfer.export(source_id, newer)
        first = next(pages, [])  # an unknown source fails here, before any output
        with _output(out) as sink, Progress(transient=True, disable=not show) as bar:
            # counting costs queries: only for a bar someone sees
            total = tidings.transfer.export_total(source_id, newer) if show else None
            task = bar.add_task("exporting", total=total)
            written = 0
            for page in itertools.chain([first], pages):
                for item in page:
                    sink.write(json.dumps(to_jsonable(_export_row(item)), ensure_ascii=False)
                               + "\n")
                written += len(page)
                bar.update(task, completed=written)
    finally:
        tidings.close()
    if out is not None:
        click.echo(f"{plural(written, 'item')} written to {out}", err=True)


@contextmanager
def _output(path: Path | None) -> Iterator[TextIO]:
    if path is None:
        yield sys.stdout
        return
    partial = path.with_name(path.name + ".partial")
    try:
        handle = partial.open("w", encoding="utf-8")
    except OSError as exc:
        raise cannot_write(path, exc) from None
    try:
        with handle:
            yield handle
    except BaseException:
        partial.unlink(missing_ok=True)  # a failed export leaves the previous file alone
        raise
    partial.replace(path)


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("query", nargs=-1, required=True)
@click.option("--ranked", is_flag=True, help="Best match first instead of newest first.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def search(ctx: Context, query: tuple[str, ...], ranked: bool, limit: int,
           as_json: bool) -> None:
    """Search titles and bodies (CJK included): words, "phrases", intitle:, author:,
    source:, date:FROM..TO, -excluded."""
    unknown = next((t for t in query if t.startswith("--") and len(t) > 2), None)
    if unknown:  # `-word` is an exclusion; `--word` is a mistyped option
        raise click.UsageError(f"No such option: {unknown}")
    tidings = ctx.open()

    async def find() -> tuple[list[SearchHit], list[Item]]:
        await tidings.search.index_recent()
        hits = tidings.search.find(" ".join(query), ranked=ranked, limit=limit)
        # hits are list rows; the JSON has every field of ``items --json`` (key, summary)
        return hits, [tidings.items.get(h.item.id) for h in hits] if as_json else []

    hits, full = run_async(tidings, find())
    if as_json:
        print_json([{**_item_row(item), "snippet": h.snippet, "rank": h.rank}
                    for h, item in zip(hits, full, strict=True)])
        return
    if not hits:
        click.echo("no matches", err=True)
    _print_items([h.item for h in hits])


@cli.command("delete")
@click.argument("item_ids", nargs=-1, required=True, type=click.IntRange(1, 2**62),
                metavar="ITEM...")
@click.pass_obj
@handle_errors
def delete_command(ctx: Context, item_ids: tuple[int, ...]) -> None:
    """Delete items for good (ids from `tidings items`); their feeds will not bring
    them back (each leaves a tombstone)."""
    tidings = ctx.open()

    async def delete_all() -> list[Item]:
        return [await tidings.items.delete(item_id) for item_id in item_ids]

    for item in run_async(tidings, delete_all()):
        click.echo(f"deleted {item.id}: {item.title[:80] or item.url}")


@cli.command("import-items")
@click.argument("file", type=click.File("r", encoding="utf-8", errors="replace"))
@click.option("--source", "source_id", help="Store every line under this source.")
@click.pass_obj
@handle_errors
def import_items(ctx: Context, file: TextIO, source_id: str | None) -> None:
    """Import history: items as JSON lines (what `tidings export` writes; FILE or -),
    stored as imported baseline, so a later fetch of the same item is no revision."""
    tidings = ctx.open()
    report = run_async(tidings, tidings.transfer.import_history(file, source_id))
    for note in report.notes[:50]:
        click.echo(f"  {note}", err=True)
    if len(report.notes) > 50:
        click.echo(f"  … and {len(report.notes) - 50} more", err=True)
    refused = plural(len(report.notes), "line")
    if report.created or report.present:
        click.echo(f"{plural(report.created, 'item')} imported, "
                   f"{report.present} already present")
    if report.notes and not (report.created or report.present):
        fail(f"nothing imported: {'the' if len(report.notes) == 1 else 'all'} {refused} "
             "refused (listed above)")
    elif report.notes:
        fail(f"{refused} refused (listed above); the rest is stored")
    elif not report.created and not report.present:
        click.echo("nothing imported: the file has no items")
