"""Commands around bodies and the raw archive: extract, reparse, prune-raw."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from tidings.app import ReparseReport, extract_target
from tidings.cli import Context, cli, handle_errors, print_json, run_async
from tidings.cli.commands_items import parse_since
from tidings.model import BodyState
from tidings.textutil import plural

if TYPE_CHECKING:
    from tidings.app import Extraction


def _extraction_json(target: str, ext: Extraction) -> dict[str, object]:
    return {
        "target": target, "state": ext.state, "method": ext.method, "title": ext.title,
        "author": ext.author, "published_at": ext.published_at, "language": ext.language,
        "lead_image": ext.lead_image, "chars": len(ext.text), "text": ext.text,
        "html": ext.html,
    }


@cli.command()
@click.argument("target", metavar="URL|FILE|-")
@click.option("--text", "mode", flag_value="text", default=True,
              help="Print the article's plain text (the default).")
@click.option("--html", "mode", flag_value="html", help="Print the sanitized article HTML.")
@click.option("--json", "mode", flag_value="json",
              help="Print text, HTML, state, method and metadata as JSON.")
@click.option("--url", "page_url", metavar="URL",
              help="Where a FILE's page came from (resolves its relative links).")
@click.pass_obj
@handle_errors
def extract(ctx: Context, target: str, mode: str, page_url: str | None) -> None:
    """Extract the main article of a page: a URL, a saved HTML file, or - for stdin.

    Needs no archive. The text goes to stdout alone (the title is in --json), so the
    output can be scored or piped as it is."""
    stdin = sys.stdin.buffer.read() if target == "-" else None
    ext = extract_target(ctx.settings, target, page_url=page_url, stdin=stdin)
    if mode == "json":
        print_json(_extraction_json(target, ext))
        return
    if mode == "html":
        click.echo(ext.html)
        return
    click.echo(ext.text)
    if ext.state is not BodyState.OK:
        click.echo(f"tidings: no article found ({len(ext.text)} characters, {ext.method}); "
                   "the body would be stored as unconfirmed", err=True)


@cli.command()
@click.option("--source", "source_id", help="Only this source's archive.")
@click.option("--since", help="Only responses fetched since (2024-05-01, 3d, 12h).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def reparse(ctx: Context, source_id: str | None, since: str | None, as_json: bool) -> None:
    """Parse archived feeds and extract archived pages again; sends no request."""
    tidings = ctx.open()

    async def both() -> tuple[ReparseReport, int]:
        reparsed = await tidings.collection.reparse(source_id, parse_since(since))
        return reparsed, await tidings.search.index_pending()

    report, indexed = run_async(tidings, both())
    if as_json:
        print_json({"feeds": report.feeds, "pages": report.pages, "revised": report.revised,
                    "unchanged": report.unchanged, "errors": report.error_count,
                    "error_samples": report.errors, "indexed": indexed})
        return
    click.echo(f"reparsed {plural(report.feeds, 'feed response')} and "
               f"{plural(report.pages, 'page')}: {plural(report.revised, 'item')} revised, "
               f"{report.unchanged} unchanged")
    for line in report.errors:
        click.echo(f"  {line}", err=True)
    if report.error_count > len(report.errors):
        click.echo(f"  ... and {report.error_count - len(report.errors)} more", err=True)


@cli.command("prune-raw")
@click.pass_obj
@handle_errors
def prune_raw(ctx: Context) -> None:
    """Drop archived responses older than raw_retention_days (bodies' pages stay)."""
    tidings = ctx.open()
    removed = run_async(tidings, tidings.collection.prune_raw())
    click.echo(f"{plural(removed, 'raw response')} removed "
               f"(older than {ctx.settings.raw_retention_days} days)")
