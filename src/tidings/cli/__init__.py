"""The ``tidings`` command line (R-CLI).

Every command turns a :class:`tidings.errors.TidingsError` into one line on
stderr and a non-zero exit code; a traceback is only shown with
``TIDINGS_DEBUG=1``. One exit-code rule holds for every command (docs/cli.md):
0 all done; 1 something could not be done (a source, a fetch, a file to write,
an id the archive does not hold); 2 the command line is wrong, nothing was tried
(an unknown option, a bad value: :class:`BadValueError`, a named file that does
not exist); 3 an internal error; 130 interrupted; 141 the reader of the output
went away (``| head``). Listing commands take
``--json``. The commands live in ``commands_*`` modules by theme; this module
holds the group and the plumbing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable, Coroutine
from dataclasses import asdict, is_dataclass
from datetime import date, datetime
from enum import Enum
from functools import wraps
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import click

from tidings.app import Tidings
from tidings.errors import BadValueError, TidingsError
from tidings.settings import VERSION, Settings, load_settings

P = ParamSpec("P")
T = TypeVar("T")

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
#: the reader of our output went away (``tidings export | head``): what a shell reports
#: for a tool that SIGPIPE ended, the signal Python ignores
EXIT_CLOSED_PIPE = 141


class OneLineGroup(click.Group):
    """A click group whose usage errors are one line too (click prints four).

    The line names the command and where its help is, so nothing is lost.
    """

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            result = super().main(*args, **kwargs)
            sys.stdout.flush()  # the last buffered lines meet a closed pipe here, if at all
        except BrokenPipeError:
            closed_pipe()
        except click.exceptions.NoArgsIsHelpError as exc:  # a bare `tidings`: its help
            click.echo(exc.format_message())
            sys.exit(EXIT_OK)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx is not None else "tidings"
            fail(f"{exc.format_message().rstrip('.')} (see `{where} --help`)", EXIT_USAGE)
        except click.ClickException as exc:
            fail(exc.format_message(), exc.exit_code)
        except click.Abort:
            fail("aborted", EXIT_INTERRUPTED)
        sys.exit(result if isinstance(result, int) else EXIT_OK)


class Context:
    """What every command gets: the settings, and the archive opened on demand.

    ``settings`` is the only place the CLI loads settings, so a command that
    needs no archive (discover, extract, set-password) reads the same TOML file
    and ``TIDINGS_*`` variables as one that does.
    """

    def __init__(self, data: str | None, config: str | None) -> None:
        self._data = data
        self._config = config
        self._settings: Settings | None = None

    @property
    def data_dir(self) -> str | None:
        """The data directory the command line (or TIDINGS_HOME) named, if any."""
        return self._data

    @property
    def config_file(self) -> str | None:
        return self._config

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self._data, config_file=self._config)
        return self._settings

    def open(self, *, create: bool = False) -> Tidings:
        return Tidings.open(self.settings, create=create)


def to_jsonable(value: Any) -> Any:
    """Dataclasses, enums, datetimes and paths as plain JSON values."""
    if is_dataclass(value) and not isinstance(value, type):
        return {k: to_jsonable(v) for k, v in asdict(value).items()}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(v) for v in value]
    return value


def print_json(value: Any) -> None:
    click.echo(json.dumps(to_jsonable(value), ensure_ascii=False, indent=2))


def fail(message: str, code: int = EXIT_ERROR) -> None:
    click.echo(f"tidings: {message}", err=True)
    sys.exit(code)


def closed_pipe() -> None:
    """End quietly because the reader of stdout is gone (``| head``), as other tools do.

    Python ignores SIGPIPE, so the write raises instead; stdout is pointed at
    /dev/null first so that the interpreter's final flush fails no second time.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (a test runner's stdout)
        pass
    sys.exit(EXIT_CLOSED_PIPE)


def handle_errors(func: Callable[P, T]) -> Callable[P, T]:
    """One line and an exit code for every expected error; no tracebacks for users."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return func(*args, **kwargs)
        except BadValueError as exc:
            fail(str(exc), EXIT_USAGE)
        except TidingsError as exc:
            fail(str(exc))
        except KeyboardInterrupt:
            fail("interrupted", EXIT_INTERRUPTED)
        except BrokenPipeError:
            closed_pipe()
        except (click.ClickException, click.exceptions.Exit, SystemExit):
            raise
        except Exception as exc:
            if os.environ.get("TIDINGS_DEBUG"):
                raise
            fail(f"internal error: {type(exc).__name__}: {exc} "
                 "(set TIDINGS_DEBUG=1 for details, and please report it)", EXIT_INTERNAL)
        raise AssertionError("unreachable")

    return wrapper


def run_async(tidings: Tidings, coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` and always close the archive's fetcher and storage afterwards."""

    async def main() -> T:
        try:
            return await coro
        finally:
            await tidings.aclose()

    return asyncio.run(main())


@click.group(cls=OneLineGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--data", "data", metavar="DIR", envvar="TIDINGS_HOME",
              help="Data directory (default ./tidings-data, or $TIDINGS_HOME).")
@click.option("--config", "config", metavar="FILE", type=click.Path(dir_okay=False),
              help="Settings file (default DIR/tidings.toml).")
@click.option("-v", "--verbose", is_flag=True, help="Log what happens (to stderr).")
@click.version_option(VERSION, prog_name="tidings")
@click.pass_context
def cli(ctx: click.Context, data: str | None, config: str | None, verbose: bool) -> None:
    """tidings: one de-duplicated, searchable timeline from many sources."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    ctx.obj = Context(data, config)


def main() -> None:
    cli(prog_name="tidings")


# The commands register themselves on ``cli`` when imported.
from tidings.cli import (  # noqa: E402
    commands_accounts,
    commands_cluster,
    commands_collect,
    commands_config,
    commands_crawl,
    commands_demo,
    commands_extract,
    commands_folders,
    commands_items,
    commands_preview,
    commands_sources,
    commands_stories,
    commands_tokens,
    commands_transfer,
)

__all__ = ["cli", "commands_accounts", "commands_cluster", "commands_collect", "commands_config",
           "commands_crawl", "commands_demo", "commands_extract", "commands_folders",
           "commands_items", "commands_preview", "commands_sources", "commands_stories",
           "commands_tokens", "commands_transfer", "main"]
