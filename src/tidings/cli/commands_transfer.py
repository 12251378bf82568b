"""``tidings export-sources`` / ``import-sources``: every source, config included,
secrets excluded, in tidings' own format (``app/sources_file.py``).

With ``export`` and ``import-items`` they move an archive whole: the items come
back under their own sources, which keep their ids.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from tidings.app.sources_file import export_sources, import_sources, read_sources_file
from tidings.cli import EXIT_ERROR, Context, cli, fail, handle_errors, run_async
from tidings.cli.infiles import OPML_MAX_BYTES, cannot_write, read_regular_file
from tidings.textutil import plural


@cli.command("export-sources")
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.pass_obj
@handle_errors
def export_sources_command(ctx: Context, file: Path | None) -> None:
    """Write every source (kind, id, folder, config; no secrets) as JSON, to FILE or
    standard output; `tidings import-sources` reads it."""
    tidings = ctx.open()
    try:
        sources = tidings.sources.all()
    finally:
        tidings.close()
    text, notes = export_sources(sources, datetime.now(UTC))
    for note in notes:
        click.echo(f"  {note}", err=True)
    if file is None:
        click.echo(text, nl=False)
        return
    try:
        file.write_text(text, "utf-8")
    except OSError as exc:
        raise cannot_write(file, exc) from None
    click.echo(f"{plural(len(sources), 'source')} written to {file}"
               + (f"; {plural(len(notes), 'secret note')} above" if notes else ""), err=True)


@cli.command("import-sources")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_obj
@handle_errors
def import_sources_command(ctx: Context, file: Path) -> None:
    """Add the sources of a file `tidings export-sources` wrote, under their own ids
    (then `tidings import-items` brings their items)."""
    entries = read_sources_file(read_regular_file(file, OPML_MAX_BYTES))
    tidings = ctx.open()
    report = run_async(tidings, import_sources(tidings.sources, entries))
    for line in report.refused:
        click.echo(f"  {line}", err=True)
    click.echo(f"{plural(len(report.added), 'source')} added, {report.present} already "
               "present")
    if report.refused:
        fail(f"{plural(len(report.refused), 'source')} refused (listed above); "
             "the rest is added", EXIT_ERROR)
