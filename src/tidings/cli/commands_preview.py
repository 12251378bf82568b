"""``tidings preview``: try a source's rules on its page before adding it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from tidings.app import kinds
from tidings.cli import Context, cli, handle_errors, print_json, run_async
from tidings.errors import BadValueError
from tidings.model import SourceKind


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """A source file (examples/sources/): kind, URL, title and config together."""

    kind: str | None = None
    url: str | None = None
    title: str = ""
    config: dict[str, Any] = field(default_factory=dict)


def source_spec(data: dict[str, Any]) -> SourceSpec:
    """``data`` as a source file when it has a ``config`` table, else as a bare config
    (no reader has a key named ``config``, so the two cannot be confused)."""
    if not isinstance(data.get("config"), dict):
        return SourceSpec(config=data)
    unknown = sorted(set(data) - {"kind", "url", "title", "config", "note"})
    if unknown:
        raise BadValueError(f"source file: unknown key {unknown[0]!r} "
                          "(kind, url, title, config, note)")
    kind, url, title = data.get("kind"), data.get("url"), data.get("title", "")
    if not all(isinstance(v, str) or v is None for v in (kind, url, title)):
        raise BadValueError("source file: kind, url and title must be strings")
    return SourceSpec(kind, url, title or "", dict(data["config"]))


def load_config(value: str) -> dict[str, Any]:
    """``--config``: a JSON object written inline, or a .json / .toml file."""
    text = value.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise BadValueError(f"--config: not valid JSON ({exc})") from None
    else:
        from tidings.cli.commands_config import read_config_file

        data = read_config_file(Path(value))
    if not isinstance(data, dict):
        raise BadValueError("--config: expected a JSON object of config keys")
    return data


@cli.command()
@click.argument("kind", type=click.Choice(kinds.kind_names(fetched_only=True)))
@click.argument("url")
@click.option("--config", "config_text", default="{}", metavar="FILE|JSON",
              help="The source's config: a .json/.toml file, or a JSON object.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def preview(ctx: Context, kind: str, url: str, config_text: str, as_json: bool) -> None:
    """Read URL once as a KIND source with --config and show what would be stored.

    Nothing is saved; exit status 1 when the rules found nothing."""
    config = source_spec(load_config(config_text)).config
    tidings = ctx.open()
    report = run_async(tidings, tidings.probes.preview(SourceKind(kind), url, config))
    if as_json:
        print_json(report.as_json())
    else:
        click.echo(report.text(), nl=False)
    if report.error:
        raise SystemExit(1)
