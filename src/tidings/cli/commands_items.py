"""Commands that read the archive: items, search."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import click
from rich.console import Console
from rich.table import Table

from tidings.app import ItemQuery
from tidings.cli import Context, cli, handle_errors, print_json
from tidings.errors import ConfigError
from tidings.model import Item, ItemBrief


def parse_since(text: str | None) -> datetime | None:
    """``2024-05-01``, an ISO time, or a relative age like ``3d`` / ``12h``."""
    if not text:
        return None
    units = {"d": "days", "h": "hours", "m": "minutes", "w": "weeks"}
    if text[-1:] in units and text[:-1].isdigit():
        return datetime.now(UTC) - timedelta(**{units[text[-1]]: int(text[:-1])})
    try:
        when = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ConfigError(f"--since {text!r}: use a date (2024-05-01) or an age (3d, 12h)") \
            from exc
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _item_row(item: Item) -> dict[str, object]:
    return {
        "id": item.id, "key": item.key, "source": item.source_id, "title": item.title,
        "url": item.url, "published_at": item.published_at,
        "discovered_at": item.discovered_at, "author": item.author,
        "body_state": item.body_state, "backfill": item.backfill, "read": item.read,
        "starred": item.starred, "summary": item.summary,
    }


def _print_items(items: Sequence[Item | ItemBrief]) -> None:
    table = Table("id", "when", "source", "title", box=None)
    for item in items:
        when = item.published_at or item.discovered_at
        table.add_row(str(item.id), f"{when:%Y-%m-%d %H:%M}", item.source_id[:20],
                      item.title[:90])
    Console().print(table)


@cli.command()
@click.option("--source", "source_id", help="Only this source's items.")
@click.option("--since", help="Only items newer than this (2024-05-01, 3d, 12h).")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def items(ctx: Context, source_id: str | None, since: str | None, limit: int,
          as_json: bool) -> None:
    """List items, newest first."""
    tidings = ctx.open()
    try:
        if source_id:
            tidings.source(source_id)
        found = tidings.items(ItemQuery(source_id=source_id, since=parse_since(since),
                                        limit=limit))
    finally:
        tidings.close()
    if as_json:
        print_json([_item_row(i) for i in found])
    else:
        _print_items(found)


@cli.command()
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
    tidings = ctx.open()
    try:
        hits = tidings.search(" ".join(query), ranked=ranked, limit=limit)
        # hits are list rows; the JSON has every field of ``items --json`` (key, summary)
        full = [tidings.item(h.item.id) for h in hits] if as_json else []
    finally:
        tidings.close()
    if as_json:
        print_json([{**_item_row(item), "snippet": h.snippet, "rank": h.rank}
                    for h, item in zip(hits, full, strict=True)])
        return
    if not hits:
        click.echo("no matches", err=True)
    _print_items([h.item for h in hits])
