"""Commands about sources: init, add, sources, remove, discover, OPML."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.progress import Progress

from tidings.app import SourceOverview, Tidings, kinds
from tidings.app.accounts import check_address
from tidings.app.sources_file import opml_left_out
from tidings.app.state import SourceState, source_state
from tidings.cli import EXIT_ERROR, Context, cli, handle_errors, print_json, run_async
from tidings.cli.commands_config import changed
from tidings.cli.commands_preview import SourceSpec, load_config, source_spec
from tidings.cli.infiles import OPML_MAX_BYTES, cannot_write, read_regular_file
from tidings.cli.tables import Column, print_table
from tidings.errors import BadValueError, ConfigError, NoFeedError, TidingsError
from tidings.model import SourceKind
from tidings.textutil import plural


@cli.command()
@click.option("--empty", is_flag=True, help="Do not add the default sources.")
@click.option("--defaults", is_flag=True,
              help="Add the default sources missing from an existing archive too.")
@click.pass_obj
@handle_errors
def init(ctx: Context, empty: bool, defaults: bool) -> None:
    """Create the data directory and the archive (with the default sources).

    On an existing archive nothing changes unless ``--defaults`` asks for the
    default sources on purpose."""
    if empty and defaults:
        raise BadValueError("--empty and --defaults contradict each other: choose one")
    settings = ctx.settings
    existed = not settings.database_url and settings.database_path.exists()
    tidings = ctx.open(create=True)
    if existed and not defaults:
        tidings.close()
        click.echo(f"an archive already exists in {settings.data_dir}; nothing changed "
                   "(`tidings init --defaults` adds the default sources to it)")
        return
    if empty:
        tidings.close()
        added = []
    else:
        added = run_async(tidings, tidings.transfer.add_defaults())
    verb = "archive has" if existed else "archive ready in"
    click.echo(f"{verb} {settings.data_dir} ({plural(len(added), 'source')} added)")


def offer_web_list(tidings: Tidings, url: str, no_feed: NoFeedError,
                   yes: bool) -> dict[str, Any]:
    """The ``web_list`` route for a page without a feed: selectors proposed for its
    repeated link block, their preview, and the person's yes (or ``--yes``)."""
    found = run_async(tidings, tidings.probes.propose_web_list(url))
    if found is None:
        raise ConfigError(f"{no_feed.message}; no repeated list of links on it either "
                          "(write web_list rules: `tidings preview web_list URL --config …`)")
    config, report = found
    click.echo(f"{no_feed.message}\nproposed web_list rules: "
               f"{json.dumps(config, ensure_ascii=False)}", err=True)
    click.echo(report.text(), nl=False, err=True)
    if report.error:
        raise ConfigError(f"the proposed rules read nothing: {report.error}")
    if not yes and not click.confirm("Add it as a web_list source with these rules?",
                                     err=True):
        raise ConfigError("not added (add it yourself with --kind web_list --config '…')")
    return config


@cli.command()
@click.argument("url", required=False)
@click.option("--kind", type=click.Choice(kinds.kind_names()),
              help="Source kind; default: find the feed of the page (autodiscovery).")
@click.option("--config", "config_text", metavar="FILE|JSON",
              help="The config: a JSON object, a .json/.toml file, or a source file "
                   "({kind, url, title, config}, as in examples/sources/).")
@click.option("--title", default="", help="Title to show instead of the feed's own.")
@click.option("--id", "source_id", help="Source id (default: made from the title).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="A config key (TOML value), checked before the source is saved.")
@click.option("--folder", help="File the source under this folder.")
@click.option("--yes", is_flag=True,
              help="On a page without a feed, add the proposed web_list rules without asking.")
@click.option("--json", "as_json", is_flag=True, help="Print the new source as JSON.")
@click.pass_obj
@handle_errors
def add(ctx: Context, url: str | None, kind: str | None, config_text: str | None, title: str,
        source_id: str | None, sets: tuple[str, ...], folder: str | None, yes: bool,
        as_json: bool) -> None:
    """Add a source; a page URL is turned into its feed by autodiscovery.

    ``--kind external NAME`` adds a source that nothing is fetched for (scripts
    push its items in)."""
    spec = source_spec(load_config(config_text)) if config_text else SourceSpec()
    url = url or spec.url
    if not url:
        raise BadValueError("add: give the URL (or a source file with one in --config)")
    kind = kind or spec.kind
    if kind is None or kind == kinds.default_kind() or kind in kinds.account_kinds():
        check_address(url)
    title = title or spec.title
    config = changed(spec.config, sets, ())
    tidings = ctx.open()
    try:
        source = run_async(tidings, tidings.sources.add(
            url, kind=SourceKind(kind) if kind else None, title=title, source_id=source_id,
            config=config, folder=folder))
    except NoFeedError as exc:
        if kind or config:
            raise
        config = offer_web_list(ctx.open(), url, exc, yes)
        tidings = ctx.open()  # each run_async closes the archive it ran on
        source = run_async(tidings, tidings.sources.create(
            url, kind=kinds.page_kind(), title=title, source_id=source_id, config=config,
            folder=folder))
    if as_json:
        print_json(source)
    else:
        click.echo(f"added {source.id}: {source.url}")


@cli.command()
@click.argument("source_ids", nargs=-1, required=True, metavar="SOURCE...")
@click.pass_obj
@handle_errors
def remove(ctx: Context, source_ids: tuple[str, ...]) -> None:
    """Remove sources (their items stay in the archive). An unknown id removes none."""
    tidings = ctx.open()
    wanted = list(dict.fromkeys(source_ids))
    try:
        for source_id in wanted:  # every id checked before the first is removed
            tidings.sources.get(source_id)
    except TidingsError:
        tidings.close()
        raise

    async def remove_all() -> None:
        for source_id in wanted:
            await tidings.sources.remove(source_id)

    run_async(tidings, remove_all())
    click.echo(f"removed {', '.join(wanted)}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def sources(ctx: Context, as_json: bool) -> None:
    """List sources with their health, last run and next fetch."""
    tidings = ctx.open()
    try:
        rows = tidings.sources.overview()
        # what the web's sparkline counts: items collected per day, history included
        # (new_item_counts leaves a first collection's history out, so it reads 0.0)
        collected = {} if as_json else {
            r.id: tidings.sources.stats(r.id).items_per_day for r in rows}
    finally:
        tidings.close()
    if as_json:
        print_json([{**row.as_json(), "state": _state(row).name,
                     "waiting": _state(row).reason} for row in rows])
        return
    rows_out = []
    for row in rows:
        never = row.last_outcome is None
        nxt = row.next_fetch_at.strftime("%m-%d %H:%M") if row.next_fetch_at else "-"
        week = sum(collected[row.id]) / 7
        rows_out.append([row.id, _state(row).name, str(row.fail_count),
                         f"{row.interval_min}m", nxt, "-" if never else f"{week:.1f}",
                         _last_run(row)])
    print_table(SOURCE_COLUMNS, rows_out)


#: ``tidings sources``: the reason of the last run wraps, or goes under its row
SOURCE_COLUMNS = (Column("id"), Column("state"), Column("fails", right=True), Column("every"),
                  Column("next fetch"), Column("items/day", right=True),
                  Column("last run", wide=True))


def _state(row: SourceOverview) -> SourceState:
    return source_state(row.health, row.last_outcome, row.last_reason,
                        never=row.last_outcome is None)


def _last_run(row: SourceOverview) -> str:
    """The reason first, without the source's URL it usually starts with (the id
    names the source already); never cut: the table wraps it."""
    if row.muted_reason:
        return f"muted: {row.muted_reason}"
    if row.last_outcome is None:
        return "never collected yet"
    reason = (row.last_reason or "").removeprefix(f"{row.url}: ")
    warn = " ⚠ " + "; ".join(row.warnings) if row.warnings else ""
    return (f"{reason} ({row.last_outcome})" if reason else row.last_outcome) + warn


@cli.command()
@click.argument("url")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def discover(ctx: Context, url: str, as_json: bool) -> None:
    """Show the feeds a page declares (or that common paths serve)."""
    from tidings.app import discover_feeds

    if not url.lower().startswith(("http://", "https://")):
        raise BadValueError(f"{url}: give the page's http(s) address (https://example.org/)")
    found = discover_feeds(ctx.settings, url)
    if as_json:
        print_json(found)
        return
    if not found:
        click.echo("no feeds found", err=True)
        sys.exit(1)
    print_table((Column("ok"), Column("score", right=True), Column("type"),
                 Column("feed", fold=True), Column("title", wide=True)),
                [["✓" if f.verified else "-", str(f.score), f.type or "?", f.url, f.title]
                 for f in found])


@cli.command("import-opml")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_obj
@handle_errors
def import_opml(ctx: Context, file: Path) -> None:
    """Subscribe to every feed of an OPML file."""
    tidings = ctx.open()
    notes: list[str] = []
    try:
        with Progress(transient=True, disable=not sys.stderr.isatty()) as bar:
            task = bar.add_task("importing", total=None)
            added, present = run_async(tidings, tidings.transfer.import_opml(
                read_regular_file(file, OPML_MAX_BYTES), str(file), notes=notes,
                progress=lambda n, total: bar.update(task, completed=n, total=total)))
    finally:
        tidings.close()
    for note in notes:
        click.echo(f"  {note}", err=True)
    click.echo(f"{plural(len(added), 'source')} added, {present} already present"
               + (f"; {plural(len(notes), 'note')} above" if notes else ""))


@cli.command("export-opml")
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.pass_obj
@handle_errors
def export_opml(ctx: Context, file: Path | None) -> None:
    """Write the subscriptions as OPML (to FILE, or to standard output)."""
    tidings = ctx.open()
    try:
        text = tidings.transfer.export_opml()
        left_out = opml_left_out(tidings.sources.all())
    finally:
        tidings.close()
    if left_out:  # said on stderr, so the OPML on stdout stays whole
        names = ", ".join(f"{s.id} ({s.kind})" for s in left_out[:20])
        more = f" and {len(left_out) - 20} more" if len(left_out) > 20 else ""
        click.echo(f"tidings: {plural(len(left_out), 'source')} not in the OPML, which "
                   f"carries feeds and accounts only: {names}{more}; `tidings "
                   "export-sources` keeps every source", err=True)
    if file is None:
        click.echo(text, nl=False)
    else:
        try:
            file.write_text(text, "utf-8")
        except OSError as exc:
            raise cannot_write(file, exc) from None
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
    report = run_async(tidings, tidings.probes.doctor(source_id, conditional=conditional))
    if as_json:
        print_json(report.as_json())
    else:
        click.echo(report.text())
    if report.error:
        sys.exit(EXIT_ERROR)  # the rule of docs/cli.md: the source could not be read
