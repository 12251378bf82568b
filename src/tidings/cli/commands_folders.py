"""``tidings folders``: list, rename and delete the folders sources are filed under.

A source's folder is set with ``tidings add --folder`` or ``tidings config ID
--folder``; OPML import keeps the folders and export writes them. Feed readers
see folders as Google Reader labels and Fever groups.
"""

from __future__ import annotations

import click

from tidings.cli import Context, cli, handle_errors, print_json, run_async
from tidings.cli.tables import Column, print_table
from tidings.textutil import plural


@cli.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the folders as JSON.")
@click.pass_context
@handle_errors
def folders(click_ctx: click.Context, as_json: bool) -> None:
    """List the folders and how many sources each holds."""
    if click_ctx.invoked_subcommand is not None:
        return
    ctx: Context = click_ctx.obj
    tidings = ctx.open()
    try:
        rows = [{"name": f.name, "sources": f.sources} for f in tidings.folders.counted()]
    finally:
        tidings.close()
    if as_json:
        print_json(rows)
    elif not rows:
        click.echo("no folders (file a source with: tidings config ID --folder NAME)",
                   err=True)
    else:
        print_table((Column("folder", wide=True), Column("sources", right=True)),
                    [[str(row["name"]), str(row["sources"])] for row in rows])


@folders.command("rename")
@click.argument("old")
@click.argument("new")
@click.pass_obj
@handle_errors
def rename(ctx: Context, old: str, new: str) -> None:
    """Rename a folder (or merge it into NEW when that exists)."""
    tidings = ctx.open()
    moved = run_async(tidings, tidings.folders.rename(old, new))
    click.echo(f"{old} -> {new} ({plural(moved, 'source')})")


@folders.command("delete")
@click.argument("name")
@click.pass_obj
@handle_errors
def delete(ctx: Context, name: str) -> None:
    """Delete a folder; its sources stay, in no folder."""
    tidings = ctx.open()
    moved = run_async(tidings, tidings.folders.delete(name))
    click.echo(f"deleted folder {name} ({plural(moved, 'source')} now in none)")
