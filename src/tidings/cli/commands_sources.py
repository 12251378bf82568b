"""Commands about sources: init, add, sources, remove, discover, OPML."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from tidings.cli import Context, cli, handle_errors, print_json, run_async
from tidings.cli.commands_config import changed
from tidings.cli.infiles import OPML_MAX_BYTES, read_regular_file
from tidings.errors import ConfigError
from tidings.model import SourceKind


@cli.command()
@click.option("--empty", is_flag=True, help="Do not add the default sources.")
@click.pass_obj
@handle_errors
def init(ctx: Context, empty: bool) -> None:
    """Create the data directory and the archive (with the default sources)."""
    tidings = ctx.open(create=True)
    if empty:
        tidings.close()
        added = []
    else:
        added = run_async(tidings, tidings.add_default_sources())
    click.echo(f"archive ready in {ctx.settings.data_dir} ({len(added)} sources added)")


@cli.command()
@click.argument("url")
@click.option("--kind", type=click.Choice([k.value for k in SourceKind]),
              help="Source kind; default: find the feed of the page (autodiscovery).")
@click.option("--title", default="", help="Title to show instead of the feed's own.")
@click.option("--id", "source_id", help="Source id (default: made from the title).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="A config key (TOML value), checked before the source is saved.")
@click.option("--folder", help="File the source under this folder.")
@click.option("--json", "as_json", is_flag=True, help="Print the new source as JSON.")
@click.pass_obj
@handle_errors
def add(ctx: Context, url: str, kind: str | None, title: str, source_id: str | None,
        sets: tuple[str, ...], folder: str | None, as_json: bool) -> None:
    """Add a source; a page URL is turned into its feed by autodiscovery.

    ``--kind external NAME`` adds a source that nothing is fetched for (scripts
    push its items in)."""
    config = changed({}, sets, ())
    tidings = ctx.open()
    source = run_async(tidings, tidings.add_source(
        url, kind=SourceKind(kind) if kind else None, title=title, source_id=source_id,
        config=config, folder=folder))
    if as_json:
        print_json(source)
    else:
        click.echo(f"added {source.id}: {source.url}")


@cli.command()
@click.argument("source_id")
@click.pass_obj
@handle_errors
def remove(ctx: Context, source_id: str) -> None:
    """Remove a source (its items stay in the archive)."""
    tidings = ctx.open()
    run_async(tidings, tidings.remove_source(source_id))
    click.echo(f"removed {source_id}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def sources(ctx: Context, as_json: bool) -> None:
    """List sources with their health, last run and next fetch."""
    tidings = ctx.open()
    try:
        rows = tidings.source_health()
    finally:
        tidings.close()
    if as_json:
        print_json([row.as_json() for row in rows])
        return
    table = Table("id", "health", "fails", "every", "next fetch", "last run", "per day",
                  box=None)
    for row in rows:
        outcome = row.last_outcome or "never"
        if row.muted_reason:
            outcome = f"muted: {row.muted_reason}"
        elif row.last_reason:
            outcome = f"{outcome}: {row.last_reason}"
        nxt = row.next_fetch_at.strftime("%m-%d %H:%M") if row.next_fetch_at else "-"
        week = sum(row.items_per_day) / max(1, len(row.items_per_day))
        table.add_row(row.id, row.health.value, str(row.fail_count), f"{row.interval_min}m",
                      nxt, outcome[:70] + (" ⚠" if row.warnings else ""), f"{week:.1f}")
    Console().print(table)


@cli.command()
@click.argument("url")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def discover(ctx: Context, url: str, as_json: bool) -> None:
    """Show the feeds a page declares (or that common paths serve)."""
    from tidings.app import discover_feeds

    found = discover_feeds(ctx.settings, url)
    if as_json:
        print_json(found)
        return
    if not found:
        click.echo("no feeds found", err=True)
        sys.exit(1)
    for feed in found:
        mark = "✓" if feed.verified else " "
        click.echo(f"{mark} {feed.score:>3}  {feed.type or '?':5} {feed.url}  {feed.title}")


@cli.command("import-opml")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_obj
@handle_errors
def import_opml(ctx: Context, file: Path) -> None:
    """Subscribe to every feed of an OPML file."""
    tidings = ctx.open()
    try:
        with Progress(transient=True, disable=not sys.stderr.isatty()) as bar:
            task = bar.add_task("importing", total=None)
            added, present = run_async(tidings, tidings.import_opml(
                read_regular_file(file, OPML_MAX_BYTES), str(file),
                progress=lambda n, total: bar.update(task, completed=n, total=total)))
    finally:
        tidings.close()
    click.echo(f"{len(added)} sources added, {present} already present")


@cli.command("export-opml")
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.pass_obj
@handle_errors
def export_opml(ctx: Context, file: Path | None) -> None:
    """Write the subscriptions as OPML (to FILE, or to standard output)."""
    tidings = ctx.open()
    try:
        text = tidings.export_opml()
    finally:
        tidings.close()
    if file is None:
        click.echo(text, nl=False)
    else:
        try:
            file.write_text(text, "utf-8")
        except OSError as exc:
            raise ConfigError(f"{file}: cannot write ({exc.strerror})") from exc
        click.echo(f"wrote {file}")


@cli.command()
@click.argument("source_id")
@click.option("--conditional", is_flag=True,
              help="Send the stored validators (see what a scheduled run would see).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def doctor(ctx: Context, source_id: str, conditional: bool, as_json: bool) -> None:
    """Fetch one source now and show every stage, storing nothing."""
    tidings = ctx.open()
    report = run_async(tidings, tidings.doctor(source_id, conditional=conditional))
    if as_json:
        print_json(report.as_json())
    else:
        click.echo(report.text())
