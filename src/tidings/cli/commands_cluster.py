"""Commands of cluster mode: worker, status, migrate (R-SCHED-7, R-STORE-2).

Each command imports the cluster's use cases itself: they bring psycopg and
procrastinate, which every other command (a SQLite archive's) would pay for at start.
"""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from tidings.cli import Context, cli, handle_errors, print_json, run_async


@cli.command()
@click.option("--concurrency", type=click.IntRange(1, 10_000), default=16, show_default=True,
              help="Jobs this worker runs at once (fetches wait on the network, not the CPU).")
@click.pass_obj
@handle_errors
def worker(ctx: Context, concurrency: int) -> None:
    """Collect, extract and index as one worker of a cluster (PostgreSQL archive).

    Run as many as you like, on as many machines: the job queue in the database
    hands each due source to one worker at a time. Stop with SIGTERM or Ctrl-C.
    """
    from tidings.app.cluster import serve_worker

    tidings = ctx.open()
    logging.getLogger("tidings").setLevel(logging.INFO)  # its lines, as `serve` shows them
    run_async(tidings, serve_worker(tidings, concurrency))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def status(ctx: Context, as_json: bool) -> None:
    """The cluster at a glance: workers, queue depth, oldest due source, recent failures."""
    from tidings.app.cluster import cluster_status

    now = datetime.now(UTC)
    figures = cluster_status(ctx.settings, now)
    if as_json:
        print_json(figures)
        return
    queued = ", ".join(f"{n} {q}" for q, n in figures.queued.items()) or "none"
    click.echo(f"workers alive: {figures.workers}")
    click.echo(f"jobs: {figures.running} running; waiting: {queued}")
    if figures.oldest_due_at is None:
        click.echo("due sources: none")
    else:
        late = (now - figures.oldest_due_at).total_seconds() / 60
        click.echo(f"due sources: {figures.due_sources}, the oldest due {late:.0f} min ago")
    click.echo(f"jobs failed in the last hour: {figures.failed_last_hour}")


@cli.command("migrate")
@click.option("--to", "target", required=True, metavar="URL|FILE",
              help="postgresql://… for a SQLite archive; a .sqlite3 file for a PostgreSQL one.")
@click.pass_obj
@handle_errors
def migrate_command(ctx: Context, target: str) -> None:
    """Copy the whole archive to another backend (resumable: run it again after a stop)."""
    from tidings.app.cluster import migrate

    columns = (TextColumn("{task.description:14}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, transient=True, disable=not sys.stderr.isatty()) as bar:
        tasks: dict[str, object] = {}

        def progress(table: str, done: int, total: int) -> None:
            if table not in tasks:
                tasks[table] = bar.add_task(table, total=total)
            bar.update(tasks[table], completed=done)  # type: ignore[arg-type]

        counts = migrate(ctx.settings, target, progress)
    rows = ", ".join(f"{n} {t}" for t, n in counts.items() if n)
    click.echo(f"copied and checked: {rows or 'an empty archive'}")
