"""One archive is one archive (issue 30, item 4): `tidings restore` and `tidings migrate`
refuse while another process has the archive open, naming it ("stop tidings serve
(pid N) first"), on SQLite and PostgreSQL, and work once it has stopped. The holder
is a real `tidings serve --no-collect` process."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

import pgserver
from storage_contract import source
from tidings.cli import cli
from tidings.store.postgres._inuse import exclusive
from tidings.store.sqlite import SqliteStorage

ROOT = Path(__file__).resolve().parent.parent


def tidings(data: Path, *args: str, url: str = "", code: int = 0) -> str:
    env = {"TIDINGS_DATABASE_URL": url, "TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1"}
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env=env)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result.output


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(data: Path, url: str = "") -> Iterator[subprocess.Popen[bytes]]:
    """`tidings serve --no-collect` on the archive, answering, until the block ends."""
    port = _port()
    env = {**os.environ, "TIDINGS_DATABASE_URL": url, "TIDINGS_HOME": str(data)}
    proc = subprocess.Popen([sys.executable, "-m", "tidings", "serve", "--no-collect",
                             "--port", str(port)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                    break
            except OSError as exc:
                if "HTTP Error" in str(exc):
                    break
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "tidings serve did not answer"
                time.sleep(0.3)
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)


@pytest.mark.slow
def test_restore_refuses_while_serve_has_the_sqlite_archive_open(tmp_path: Path) -> None:
    data = tmp_path / "data"
    tidings(data, "init", "--empty")
    backup = Path(tidings(data, "backup").split("backup written to ")[1].strip())
    with SqliteStorage(data / "tidings.sqlite3") as store:
        store.add_source(source("added-after-the-backup"))
    with serving(data) as serve:
        out = tidings(data, "restore", str(backup), code=1)
        assert f"stop tidings serve (pid {serve.pid}) first" in out
        assert out.count("\n") == 1
        assert not list(data.glob("tidings.sqlite3.before-restore-*")), "nothing moved"
        assert tidings(data, "restore", "--check", str(backup)).startswith(str(backup))
    out = tidings(data, "restore", str(backup))
    assert "restored" in out and len(list(data.glob("tidings.sqlite3.before-restore-*"))) == 1
    with SqliteStorage(data / "tidings.sqlite3") as store:
        assert [s.id for s in store.list_sources()] == []


@pytest.mark.slow
@pytest.mark.postgres
def test_migrate_refuses_a_target_in_use_on_postgresql_and_sqlite(tmp_path: Path) -> None:
    url = pgserver.schema_url()
    lite, pg = tmp_path / "lite", tmp_path / "pg"
    tidings(lite, "init", "--empty")
    with SqliteStorage(lite / "tidings.sqlite3") as store:
        store.add_source(source("ex"))
    assert "1 sources" in tidings(lite, "migrate", "--to", url)
    with serving(pg, url) as serve:
        out = tidings(lite, "migrate", "--to", url, code=1)
        assert f"stop tidings serve (pid {serve.pid}) first" in out
    with exclusive(url, "migrate"):  # let go with the process
        pass
    with serving(lite) as serve:  # a PostgreSQL archive copied into a SQLite file in use
        out = tidings(pg, "migrate", "--to", str(lite / "tidings.sqlite3"), url=url, code=1)
        assert f"stop tidings serve (pid {serve.pid}) first" in out


def test_an_archive_opened_during_a_restore_waits_for_it(tmp_path: Path) -> None:
    """A restore holds the archive alone; a process opening it meanwhile waits for the
    restore to end rather than open the file being replaced."""
    data = tmp_path / "data"
    tidings(data, "init", "--empty")
    database = data / "tidings.sqlite3"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
         "from tidings.store import inuse\n"
         "with inuse.exclusive(Path(sys.argv[1]), 'restore'):\n"
         "    print('held', flush=True)\n    time.sleep(2)\n", str(database)],
        stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        started = time.monotonic()
        with SqliteStorage(database) as store:
            waited = time.monotonic() - started
            assert store.list_sources() == []
        assert waited >= 1.0, f"opened after {waited:.2f} s, during the restore"
    finally:
        holder.communicate(timeout=30)  # closes its pipe too
    assert holder.returncode == 0
