"""``tidings config SOURCE``: see and change a source's config from the command line.

Values are TOML (``--set proxy=true``, ``--set 'url_allow=["^https://x/"]'``,
``--set filters.max_age_days=30``); a value that is not TOML is taken as a
string (``--set user_agent=Reader/1.0``). The whole config is checked by the
source kind's schema before anything is saved, exactly as the web form and the
API check it, and a refusal names the key.
"""

from __future__ import annotations

import copy
import json
import tomllib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from tidings.app import SourceUpdate
from tidings.cli import Context, cli, handle_errors, print_json, run_async
from tidings.errors import BadValueError


def parse_value(text: str) -> Any:
    """A TOML value, or the text itself when it is not one."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def assignment(text: str) -> tuple[list[str], Any]:
    """``a.b=value`` as (["a", "b"], value)."""
    key, sep, value = text.partition("=")
    path = [p.strip() for p in key.split(".")]
    if not sep or not all(path):
        raise BadValueError(f"--set {text!r}: write KEY=VALUE (KEY may be dotted: filters.block)")
    return path, parse_value(value.strip())


def changed(config: Mapping[str, Any], sets: tuple[str, ...], unsets: tuple[str, ...]
            ) -> dict[str, Any]:
    """``config`` with the assignments and removals applied (nested tables by dots)."""
    out: dict[str, Any] = copy.deepcopy(dict(config))  # nested tables are edited in place
    for text in sets:
        path, value = assignment(text)
        table = out
        for part in path[:-1]:
            table = table.setdefault(part, {})
            if not isinstance(table, dict):
                raise BadValueError(f"--set {text!r}: {part!r} is not a table")
        table[path[-1]] = value
    for key in unsets:
        path = key.split(".")
        table = out
        for part in path[:-1]:
            table = table.get(part, {}) if isinstance(table, dict) else {}
        if not isinstance(table, dict) or path[-1] not in table:
            raise BadValueError(f"--unset {key!r}: the config has no such key")
        del table[path[-1]]
    return out


def read_config_file(path: Path) -> dict[str, Any]:
    """A config from a TOML file (or .json); ConfigError saying what is wrong with it."""
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise BadValueError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise BadValueError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise BadValueError(f"{path}: not valid {path.suffix.lstrip('.') or 'TOML'} ({exc})"
                          ) from None
    if not isinstance(data, dict):
        raise BadValueError(f"{path}: expected a table of config keys")
    return data


@cli.command("config")
@click.argument("source_id")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="Set a key (TOML value; dotted keys reach into tables). Repeatable.")
@click.option("--unset", "unsets", multiple=True, metavar="KEY", help="Remove a key.")
@click.option("--from-file", "from_file", type=click.Path(exists=True, dir_okay=False,
                                                          path_type=Path),
              help="Replace the whole config with a TOML (or .json) file's.")
@click.option("--folder", help="File the source under this folder ('' for none).")
@click.option("--json", "as_json", is_flag=True, help="Print the config as JSON.")
@click.pass_obj
@handle_errors
def config_command(ctx: Context, source_id: str, sets: tuple[str, ...],
                   unsets: tuple[str, ...], from_file: Path | None, folder: str | None,
                   as_json: bool) -> None:
    """Show a source's config, or change it (checked before it is saved)."""
    tidings = ctx.open()
    source = tidings.sources.get(source_id)
    update = SourceUpdate()
    if sets or unsets or from_file:
        base = read_config_file(from_file) if from_file else source.config
        update = replace(update, config=changed(base, sets, unsets))
    if folder is not None:
        update = replace(update, folder=folder)  # storage cleans it; '' is no folder
    if update:
        source = run_async(tidings, tidings.sources.update(source_id, update))
    else:
        tidings.close()
    if as_json:
        print_json(dict(source.config))
        return
    if source.folder:
        click.echo(f"# folder: {source.folder}")
    if source.config:
        for key, value in sorted(source.config.items()):
            click.echo(f"{key} = {json.dumps(value, ensure_ascii=False)}")
    else:
        click.echo(f"{source_id}: no config keys set (defaults apply)")
