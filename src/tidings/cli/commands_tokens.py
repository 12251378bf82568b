"""``tidings tokens``: API tokens for a headless server, without the settings page.

The same tokens as the web's settings page makes (``web/auth.new_token``): the
value is shown once, when it is made, and only its digest is stored; a script
sends it as ``Authorization: Bearer …`` (docs/api.md).
"""

from __future__ import annotations

import click

from tidings.cli import Context, cli, handle_errors, print_json, run_async
from tidings.cli.tables import Column, print_table
from tidings.errors import NotFoundError


@cli.group()
def tokens() -> None:
    """API tokens: add one (shown once), list them, revoke one."""


@tokens.command("add")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print id, name and value as JSON.")
@click.pass_obj
@handle_errors
def add_token(ctx: Context, name: str, as_json: bool) -> None:
    """Make a token named NAME and print its value: the only time it is shown."""
    from tidings.web import auth

    tidings = ctx.open()
    token_id, value, digest = auth.new_token()
    token = run_async(tidings, tidings.tokens.add(
        token_id, auth.token_label(name), digest))
    if as_json:
        print_json({"id": token.id, "name": token.name, "token": value})
        return
    click.echo(value)
    click.echo(f"token {token.id} ({token.name}) made; its value above is not shown again "
               "(send it as `Authorization: Bearer …`; revoke: tidings tokens revoke "
               f"{token.id})", err=True)


@tokens.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def list_tokens(ctx: Context, as_json: bool) -> None:
    """The tokens: id, name, when made and last used (never their values)."""
    tidings = ctx.open()
    try:
        found = tidings.tokens.all()
    finally:
        tidings.close()
    if as_json:
        print_json([{"id": t.id, "name": t.name, "created_at": t.created_at,
                     "last_used_at": t.last_used_at} for t in found])
        return
    if not found:
        click.echo("no API tokens (make one with: tidings tokens add NAME)", err=True)
    print_table((Column("id"), Column("created"), Column("last used"),
                 Column("name", wide=True)),
                [[t.id, f"{t.created_at:%Y-%m-%d %H:%M}",
                  f"{t.last_used_at:%Y-%m-%d %H:%M}" if t.last_used_at else "never", t.name]
                 for t in found])


@tokens.command("revoke")
@click.argument("token_id", metavar="ID")
@click.pass_obj
@handle_errors
def revoke_token(ctx: Context, token_id: str) -> None:
    """Revoke the token ID (from `tidings tokens list`): it stops working at once."""
    tidings = ctx.open()
    if not run_async(tidings, tidings.tokens.revoke(token_id)):
        raise NotFoundError(f"no API token {token_id!r} (see `tidings tokens list`)")
    click.echo(f"revoked token {token_id}")
