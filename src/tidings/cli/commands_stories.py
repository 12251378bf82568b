"""`tidings cluster ...`: story clusters (R-DEDUP-12) rebuilt, explained, edited by hand."""

from __future__ import annotations

import sys

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from tidings.cli import Context, cli, handle_errors, print_json, run_async
from tidings.textutil import plural


@cli.group()
def cluster() -> None:
    """Stories told by several sources: one row per story, with heat."""


@cluster.command()
@click.pass_obj
@handle_errors
def rebuild(ctx: Context) -> None:
    """Cluster the whole archive again (hand splits and merges are kept)."""
    tidings = ctx.open()
    total = tidings.stories.archive_size()
    with Progress(TextColumn("clustering"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), disable=not sys.stderr.isatty(),
                  console=None) as bar:
        task = bar.add_task("clustering", total=total)
        placed = run_async(tidings, tidings.stories.rebuild(
            lambda n: bar.update(task, advance=n)))
    click.echo(f"{plural(placed, 'item')} clustered")


@cluster.command("explain")
@click.argument("item_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def explain_cmd(ctx: Context, item_id: int, as_json: bool) -> None:
    """Why ITEM_ID is in its story: each other item's similarity and shared shingles."""
    tidings = ctx.open()
    try:
        why = tidings.stories.explain(item_id)
    finally:
        tidings.close()
    if as_json:
        print_json(why)
        return
    joined = f"joined item {why.matched} at {why.similarity:.2f}" if why.matched \
        else "started the story"
    told = f", told in {', '.join(why.languages)}" if why.languages else ""
    click.echo(f"item {item_id}: story {why.cluster_id}, {joined}{told}")
    if not why.peers:
        click.echo("  alone in its story")
    else:
        click.echo("  meaning  shingles")
    for p in why.peers:
        meaning = f"{p.meaning:.2f}" if p.meaning is not None else "  - "
        click.echo(f"  {meaning:>7}  {p.similarity:8.2f}  item {p.item_id} [{p.source_id}]"
                   f"{' ' + p.language if p.language else ''} {p.title[:60]}")
        click.echo(f"        shared: {' '.join(p.shared[:30]) or '(nothing)'}")


@cluster.command("split")
@click.argument("item_id", type=int)
@click.pass_obj
@handle_errors
def split_cmd(ctx: Context, item_id: int) -> None:
    """Take ITEM_ID out of its story, for good (kept across rebuilds)."""
    tidings = ctx.open()
    n = run_async(tidings, tidings.stories.split(item_id))
    click.echo(f"item {item_id} split from {plural(n, 'item')}")


@cluster.command("merge")
@click.argument("item_id", type=int)
@click.argument("other_id", type=int)
@click.pass_obj
@handle_errors
def merge_cmd(ctx: Context, item_id: int, other_id: int) -> None:
    """Put OTHER_ID's story into ITEM_ID's, for good (kept across rebuilds)."""
    tidings = ctx.open()
    n = run_async(tidings, tidings.stories.merge(item_id, other_id))
    click.echo(f"{plural(n, 'item')} moved into the story of item {item_id}")
