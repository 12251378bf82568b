"""Images in a cluster (issue 30, item 6): one `tidings worker` extracts an article and
localizes its image; two `tidings serve --no-collect` processes, each with a data
directory of its own, both serve it, because in cluster mode the image is kept in
PostgreSQL (pipeline/media.py), not in the worker's data directory."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest

import pgserver
from extract_site import PNG, Entry, Site, article_page
from farm import serve_app
from tidings.app import ItemQuery, Tidings
from tidings.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent


def _env(url: str, data: Path) -> dict[str, str]:
    return {**os.environ, "TIDINGS_DATABASE_URL": url, "TIDINGS_HOME": str(data),
            "TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1", "TIDINGS_PER_HOST_DELAY": "0",
            "PYTHONUNBUFFERED": "1"}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(check: Callable[[], bool], seconds: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}:\n" + \
            log.read_text()[-3000:]
        time.sleep(1)


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""
    except OSError:
        return 0, b""


@contextmanager
def _process(args: list[str], env: dict[str, str], log: Path) -> Iterator[None]:
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tidings", *args], env=env, cwd=ROOT,
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        yield
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    with serve_app(s.app()) as base:
        s.base = base
        s.page("/a/1", article_page(1, title="Gates open", images=("/img/1.png",)))
        s.image("/img/1.png")
        when = format_datetime(datetime.now(UTC) - timedelta(hours=1), usegmt=True)
        s.feeds["/feed.xml"] = [Entry("Gates open", "/a/1", when)]
        yield s


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.timeout(600)
def test_two_web_nodes_serve_the_image_one_worker_extracted(tmp_path: Path, site: Site) -> None:
    url = pgserver.schema_url()
    worker_dir, web_dirs = tmp_path / "worker", [tmp_path / "web1", tmp_path / "web2"]
    settings = load_settings(worker_dir, env=_env(url, worker_dir))
    tid = Tidings.open(settings, create=True)
    try:
        asyncio.run(tid.sources.create(f"{site.base}/feed.xml", source_id="news"))

        def extracted() -> str | None:
            items = tid.items.query(ItemQuery(limit=10))
            found = re.search(r'src="(/media/[^"]+\.png)"', items[0].body or "") if items else None
            return found.group(1) if found else None

        ports = [_port(), _port()]
        with ExitStack() as running:
            running.enter_context(_process(["-v", "worker"], _env(url, worker_dir),
                                           tmp_path / "worker.log"))
            for port, data in zip(ports, web_dirs, strict=True):
                data.mkdir()
                running.enter_context(_process(
                    ["serve", "--no-collect", "--port", str(port)], _env(url, data),
                    tmp_path / f"{data.name}.log"))
            _wait(lambda: extracted() is not None, 240, "the worker's extraction",
                  tmp_path / "worker.log")
            path = extracted()
            assert path is not None and site.requests["/img/1.png"] == 1
            for port, data in zip(ports, web_dirs, strict=True):
                _wait(lambda p=port: _get(f"http://127.0.0.1:{p}/healthz")[0] != 0, 60,
                      "the web node", tmp_path / f"{data.name}.log")
                status, body = _get(f"http://127.0.0.1:{port}{path}")
                assert (status, body) == (200, PNG), f"web node {data.name} did not serve it"
                assert not (data / "media").exists(), "served from the database"
            assert not (worker_dir / "media").exists(), "kept in PostgreSQL, not on disk"
    finally:
        tid.close()


def _cli(data: Path, *args: str, url: str = "", code: int = 0) -> str:
    from click.testing import CliRunner

    from tidings.cli import cli

    result = CliRunner().invoke(cli, ["--data", str(data), *args],
                                env={"TIDINGS_DATABASE_URL": url})
    assert result.exit_code == code, result.output
    return result.output


@pytest.mark.postgres
def test_migrate_and_backups_carry_the_images(tmp_path: Path) -> None:
    """A SQLite archive's image files go into the cluster's table, and come back out in a
    SQLite copy and in a PostgreSQL backup (served from the table there)."""
    from tidings.extract.images import media_name
    from tidings.store.sqlite import SqliteStorage

    url = pgserver.schema_url()
    lite = tmp_path / "lite"
    _cli(lite, "init", "--empty")
    name = media_name(PNG, "png")
    (lite / "media" / name).parent.mkdir(parents=True)
    (lite / "media" / name).write_bytes(PNG)
    (lite / "media" / "ab").mkdir()
    (lite / "media" / "ab" / "notes.txt").write_text("not an image of ours")
    assert "1 media" in _cli(lite, "migrate", "--to", url)
    assert "1 media" in _cli(lite, "migrate", "--to", url), "resumed: nothing twice"
    tid = Tidings.open(load_settings(tmp_path / "pg", env={"TIDINGS_DATABASE_URL": url}))
    try:
        assert tid.items.media(name) == PNG and tid.items.media("ab/notes.txt") is None
    finally:
        tid.close()
    back = tmp_path / "back.sqlite3"
    assert "1 media" in _cli(tmp_path / "pg", "migrate", "--to", str(back), url=url)
    with SqliteStorage(back) as store:
        assert store.get_media(name) == PNG
    written = Path(_cli(tmp_path / "pg", "backup", url=url).split("backup written to ")[1]
                   .strip())
    assert [p.name for p in written.parent.iterdir()] == [written.name], "no partial, no lock"
    with SqliteStorage(written) as store:
        assert store.get_media(name) == PNG
