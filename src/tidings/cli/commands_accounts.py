"""``tidings import-accounts``: hundreds of X and WeChat accounts from one file."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.progress import Progress

from tidings.app.accounts import read_accounts
from tidings.cli import Context, cli, handle_errors, print_json, run_async
from tidings.textutil import plural


@cli.command("import-accounts")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--folder", default=None, help="File the new sources under this folder.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def import_accounts(ctx: Context, file: Path, folder: str | None, as_json: bool) -> None:
    """Follow every account of FILE: one a line, ``x:@handle`` or ``wechat:<account id>``
    (x.com profile URLs too; ``#`` starts a comment). A file with a bad line adds nothing."""
    accounts = read_accounts(file.read_text(encoding="utf-8", errors="replace").splitlines())
    tidings = ctx.open()
    try:
        with Progress(transient=True, disable=not sys.stderr.isatty()) as bar:
            task = bar.add_task("adding accounts", total=len(accounts))
            added, present = run_async(tidings, tidings.sources.import_accounts(
                accounts, folder=folder,
                progress=lambda n, total: bar.update(task, completed=n, total=total)))
    finally:
        tidings.close()
    if as_json:
        print_json({"added": [s.id for s in added], "already_present": present})
    else:
        click.echo(f"{plural(len(added), 'account')} added, {present} already present")
