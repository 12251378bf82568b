"""Commands that run things: collect, serve, backup, stats."""

from __future__ import annotations

import logging
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from tidings.app import RoundReport, Tidings, check_backup, restore_backup
from tidings.app.state import trouble_line
from tidings.cli import (
    EXIT_ERROR,
    Context,
    cli,
    handle_errors,
    print_json,
    run_async,
    to_jsonable,
)
from tidings.errors import BadValueError, ConfigError
from tidings.heap import release_freed
from tidings.model import RunCounts, RunOutcome, Source
from tidings.textutil import plural


class BarProgress:
    """A rich progress bar fed by the round (shown only on a terminal)."""

    def __init__(self, bar: Progress) -> None:
        self.bar = bar
        self.task = bar.add_task("collecting", total=None)

    def started(self, total: int) -> None:
        self.bar.update(self.task, total=total)

    def finished(self, source: Source, counts: RunCounts) -> None:
        self.bar.update(self.task, advance=1, description=f"{source.id[:24]:24}")


def _summary(report: RoundReport, indexed: int, index_s: float) -> dict[str, object]:
    failures = {sid: c.error for sid, c in report.results.items()
                if c.outcome is RunOutcome.FAILED}
    waits = {sid: c.error for sid, c in report.results.items()
             if c.outcome is RunOutcome.BUDGET}
    elapsed = ((report.finished_at - report.started_at).total_seconds()
               if report.finished_at else 0.0)
    return {
        "sources": report.sources, "ok": report.ok, "failed": report.failed,
        "waiting": report.waiting,
        "not_modified": report.count(RunOutcome.NOT_MODIFIED),
        "created": report.created, "revised": report.revised,
        "seconds": round(elapsed, 3), "indexed": indexed,
        "index_seconds": round(index_s, 3), "failures": failures, "waits": waits,
        "extraction": None if report.extraction is None else {
            k: getattr(report.extraction, k)
            for k in ("tried", "ok", "unconfirmed", "skipped", "failed")},
    }


def _waiting(report: RoundReport) -> Counter[str]:
    """The sources a paid API held back, counted per trouble (one line each)."""
    return Counter(trouble_line(c.error or "a paid API's budget")
                   for c in report.results.values() if c.outcome is RunOutcome.BUDGET)


async def _collect(tidings: Tidings, source_ids: tuple[str, ...], show: bool,
                   extract: bool = True) -> tuple[RoundReport, int, float]:
    """The round, then the search index brought up to date (how many, in how long)."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, transient=True, disable=not show) as bar:
        report = await tidings.collection.round(source_ids or None, progress=BarProgress(bar),
                                                extract=extract)
    release_freed()  # the round's parsed feeds are gone: indexing starts from less
    started = time.perf_counter()
    indexed = await tidings.search.index_pending()
    return report, indexed, time.perf_counter() - started


@cli.command()
@click.argument("source_ids", nargs=-1, metavar="[SOURCE]...")
@click.option("--once", is_flag=True, help="One round over the due sources, then exit.")
@click.option("--all", "every", is_flag=True, help="Every source now, due or not.")
@click.option("--json", "as_json", is_flag=True, help="Print the round's summary as JSON.")
@click.option("--no-extract", "no_extract", is_flag=True,
              help="Skip extracting pending bodies after the round.")
@click.pass_obj
@handle_errors
def collect(ctx: Context, source_ids: tuple[str, ...], once: bool, every: bool,
            as_json: bool, no_extract: bool) -> None:
    """Collect now: the named sources (due or not), or one round over the due ones."""
    if not once and not source_ids and not every:
        raise BadValueError("say --once for one round over the due sources, --all for every "
                          "source, or name sources (`tidings serve` collects on a schedule)")
    tidings = ctx.open()
    if every:
        source_ids = tuple(s.id for s in tidings.sources.all())
    show = sys.stderr.isatty() and not as_json
    report, indexed, index_s = run_async(tidings, _collect(tidings, source_ids, show,
                                                           not no_extract))
    summary = _summary(report, indexed, index_s)
    if as_json:
        print_json(summary)
    else:
        click.echo(f"{plural(report.sources, 'source')}: {report.ok} ok, "
                   f"{report.failed} failed"
                   + (f", {report.waiting} waiting" if report.waiting else "")
                   + f"; {plural(report.created, 'new item')}, "
                   f"{report.revised} revised in {summary['seconds']} s")
        if report.extraction is not None and report.extraction.tried:
            ex = report.extraction
            click.echo(f"bodies: {ex.ok} extracted, {ex.unconfirmed + ex.failed} unconfirmed "
                       f"of {plural(ex.tried, 'page')}")
        for sid, error in report.results.items():
            if error.outcome is RunOutcome.FAILED:
                click.echo(f"  {sid}: {error.error}", err=True)
        for reason, n in _waiting(report).items():
            click.echo(f"  {n} waiting: {reason}", err=True)
    skipped = sorted(set(source_ids) - set(report.results))
    if skipped:
        click.echo(f"not run: {', '.join(skipped[:10])}{' …' if len(skipped) > 10 else ''} "
                   "(muted, or running in another process right now)", err=True)
    if report.failed or report.waiting or (skipped and not every):
        sys.exit(EXIT_ERROR)  # the rule of docs/cli.md: 1 when anything was not read


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def stats(ctx: Context, as_json: bool) -> None:
    """Counts: sources by health, items, and the last round's outcome."""
    tidings = ctx.open()
    try:
        figures = tidings.reports.stats()
        spend = tidings.paid.today()
        shown = Counter("new" if r.last_outcome is None else r.health.value
                        for r in ([] if as_json else tidings.sources.overview()))
        days = tidings.paid.by_day()
        troubles = {p: t.reason for p, t in tidings.paid.troubles().items()}
        last = {p: tidings.paid.calls(p, limit=1) for p in {n for d in days.values() for n in d}}
    finally:
        tidings.close()
    if as_json:
        print_json({**to_jsonable(figures), "spend_today": to_jsonable(spend),
                    "spend_by_day": to_jsonable(days), "paid_troubles": troubles})
        return
    # a source never collected is "new", not "ok" (as in `tidings sources`)
    health = ", ".join(f"{n} {h}" for h, n in sorted(shown.items()))
    click.echo(f"sources: {health or 'none'}")
    click.echo(f"items: {figures.items} ({figures.items_backfill} backfill, "
               f"{figures.items_unread} unread); raw responses: {figures.raw_responses}")
    if figures.last_round_started:
        click.echo(f"last round: {figures.last_round_started:%Y-%m-%d %H:%M} UTC, "
                   f"{figures.last_round_ok} of "
                   f"{plural(figures.last_round_sources, 'source')} ok, "
                   f"{plural(figures.last_round_new_items, 'new item')}")
    for provider, used in sorted(spend.items()):
        click.echo(f"paid API {provider} today: {plural(used.calls, 'call')}, cost {used.cost:g}")
    for day, providers in days.items():
        for provider, used in sorted(providers.items()):
            click.echo(f"  {day} {provider}: {plural(used.calls, 'call')}, cost {used.cost:g}")
    for provider, calls in sorted(last.items()):
        if calls and calls[0].status != "ok" and provider not in troubles:
            click.echo(f"paid API {provider}: last call {calls[0].status}")
    for reason in sorted(troubles.values()):
        click.echo(f"paid API trouble: {reason}")


@cli.command()
@click.pass_obj
@handle_errors
def backup(ctx: Context) -> None:
    """Write a consistent copy of the archive, named by time (restore: `tidings restore`)."""
    tidings = ctx.open()
    try:
        path = tidings.backups.make()
    finally:
        tidings.close()
    click.echo(f"backup written to {path}")


@cli.command()
@click.option("--host", help="Address to listen on (default 127.0.0.1, or the settings').")
@click.option("--port", type=click.IntRange(1, 65535), help="Port (default 8080).")
@click.option("--no-collect", "no_collect", is_flag=True,
              help="Serve the reader only (a cluster's `tidings worker`s collect).")
@click.pass_obj
@handle_errors
def serve(ctx: Context, host: str | None, port: int | None, no_collect: bool) -> None:
    """Run the web reader and the scheduler in one process."""
    from dataclasses import replace

    from tidings.web import serve as serve_web

    settings = ctx.settings
    if host:
        settings = replace(settings, host=host)
    if port:
        settings = replace(settings, port=port)
    ctx.open().close()  # a clear error now if there is no archive yet
    serve_console()
    serve_web(settings, collect=not no_collect)


def serve_console() -> None:
    """``serve`` shows each round's outcome and failing sources next to uvicorn's lines."""
    logging.getLogger("tidings").setLevel(logging.INFO)


@cli.command("set-password")
@click.option("--stdin", "from_stdin", is_flag=True, help="Read the password from stdin.")
@click.pass_obj
@handle_errors
def set_password_command(ctx: Context, from_stdin: bool) -> None:
    """Set the web reader's admin password (logs every session out)."""
    if from_stdin:
        password = sys.stdin.readline().rstrip("\n")
    elif not sys.stdin.isatty():
        raise ConfigError("no terminal to ask for the password on; "
                          "pipe it in with `tidings set-password --stdin`")
    else:
        password = click.prompt("New admin password", hide_input=True,
                                confirmation_prompt=True)
    tidings = ctx.open()  # the password is stored in the archive
    run_async(tidings, tidings.users.set_password(password))
    click.echo(f"admin password set for {ctx.settings.data_dir}")


@cli.command()
@click.argument("backup_file", metavar="BACKUP",
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--check", "check_only", is_flag=True, help="Only check the backup.")
@click.pass_obj
@handle_errors
def restore(ctx: Context, backup_file: Path, check_only: bool) -> None:
    """Check a backup and put it in place of the archive (stop `tidings serve` first).

    The archive it replaces is kept next to it (``tidings.sqlite3.before-restore-…``)."""
    items = check_backup(ctx.settings, backup_file)
    if check_only:
        click.echo(f"{backup_file}: a whole archive of {plural(items, 'item')}; "
                   "restore it with `tidings restore` without --check")
        return
    kept = restore_backup(ctx.settings, backup_file, datetime.now(UTC))
    click.echo(f"restored {backup_file} ({plural(items, 'item')}) into "
               f"{ctx.settings.database_path}"
               + (f"; the previous archive is kept as {kept}" if kept else ""))
