"""The command line, run in-process with click's runner and as a real subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest
from aiohttp import web
from click.testing import CliRunner

from farm import Farm, running_farm, serve_app
from tidings.app import Tidings
from tidings.app.transfer import Transfer
from tidings.cli import cli
from tidings.model import ItemData
from tidings.pipeline.upsert import upsert_items
from tidings.settings import load_settings

ENV = {"TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1", "TIDINGS_PER_HOST_DELAY": "0"}


def run(data: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env=ENV)
    assert result.exit_code == code, result.output
    return result.output


def collect_once(data: Path) -> dict[str, object]:
    """``collect --once --json``, whose exit code is 1 exactly when a source failed."""
    result = CliRunner().invoke(cli, ["--data", str(data), "collect", "--once", "--json"],
                                env=ENV)
    out: dict[str, object] = json.loads(result.output)
    assert result.exit_code == (1 if out["failed"] else 0), result.output
    return out


def test_init_creates_the_18_default_sources(tmp_path: Path) -> None:
    run(tmp_path, "init")
    rows = json.loads(run(tmp_path, "sources", "--json"))
    assert len(rows) == 18
    for row in rows:
        parts = urlsplit(row["url"])
        assert parts.scheme == "https" and parts.netloc and "." in parts.netloc
        assert row["health"] == "ok" and row["last_outcome"] is None
    assert len({r["id"] for r in rows}) == 18


def test_without_an_archive_commands_say_what_to_do(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--data", str(tmp_path / "none"), "items"], env=ENV)
    assert result.exit_code == 1
    assert "tidings init" in result.output
    assert "Traceback" not in result.output


def test_collect_list_search_export_import_backup(tmp_path: Path) -> None:
    with running_farm(Farm(feeds=20)) as farm:
        opml = tmp_path / "farm.opml"
        opml.write_bytes(farm.opml())
        run(tmp_path, "init", "--empty")
        assert "20 sources added" in run(tmp_path, "import-opml", str(opml))
        # two of the farm's feeds fail: exit 1 (docs/cli.md), the summary still printed
        summary = json.loads(run(tmp_path, "collect", "--once", "--json", code=1))
        assert summary["sources"] == 20
        assert summary["failed"] == 2 and summary["created"] > 100
        assert summary["indexed"] == summary["created"]
        items = json.loads(run(tmp_path, "items", "--json", "--limit", "500"))
        assert len(items) == summary["created"]
        hits = json.loads(run(tmp_path, "search", "--json", "Wire story"))
        assert hits and all("Wire story" in h["title"] for h in hits)
        stats = json.loads(run(tmp_path, "stats", "--json"))
        assert stats["items"] == summary["created"]
        exported = run(tmp_path, "export-opml")
        assert exported.count("xmlUrl=") == 20
        other = tmp_path / "other"
        run(other, "init", "--empty")
        (tmp_path / "out.opml").write_text(exported)
        assert "20 sources added" in run(other, "import-opml", str(tmp_path / "out.opml"))
        assert "backup written" in run(tmp_path, "backup")
        backups = list((tmp_path / "backups").glob("*.sqlite3"))
        assert len(backups) == 1
        with sqlite3.connect(backups[0]) as db:
            assert db.execute("select count(*) from items").fetchone()[0] == len(items)


def test_collect_named_source_ignores_schedule(tmp_path: Path) -> None:
    with running_farm(Farm(feeds=3)) as farm:
        (tmp_path / "f.opml").write_bytes(farm.opml())
        run(tmp_path, "init", "--empty")
        run(tmp_path, "import-opml", str(tmp_path / "f.opml"))
        run(tmp_path, "collect", "--once")
        sid = json.loads(run(tmp_path, "sources", "--json"))[0]["id"]
        again = json.loads(run(tmp_path, "collect", "--once", "--json"))
        assert again["sources"] == 0  # nothing due
        named = json.loads(run(tmp_path, "collect", sid, "--json"))
        assert named["sources"] == 1
        run(tmp_path, "collect", "no-such-source", code=1)


def blog_app() -> web.Application:
    """A page that declares its feed, and the feed."""
    feed = (b'<?xml version="1.0"?><rss version="2.0"><channel><title>Blog</title>'
            b"<item><title>Hello</title><link>http://example.com/a</link></item>"
            b"</channel></rss>")
    page = ('<html><head><link rel="alternate" type="application/rss+xml" '
            'title="Blog feed" href="/feed.xml"></head><body>hi</body></html>')

    async def home(request: web.Request) -> web.Response:
        return web.Response(text=page, content_type="text/html")

    async def feed_xml(request: web.Request) -> web.Response:
        return web.Response(body=feed, content_type="application/rss+xml")

    app = web.Application()
    app.router.add_get("/", home)
    app.router.add_get("/feed.xml", feed_xml)
    return app


def test_add_discovers_the_feed_of_a_page(tmp_path: Path) -> None:
    with serve_app(blog_app()) as url:
        run(tmp_path, "init", "--empty")
        source = json.loads(run(tmp_path, "add", url + "/", "--json"))
        assert source["url"] == url + "/feed.xml"
        listed = json.loads(run(tmp_path, "discover", url + "/", "--json"))
        assert listed[0]["url"] == url + "/feed.xml"
        result = CliRunner().invoke(cli, ["--data", str(tmp_path), "add", url + "/"], env=ENV)
        assert result.exit_code == 1 and "already" in result.output


@pytest.mark.parametrize("via", ["environment", "settings file"])
def test_discover_without_an_archive_reads_the_same_settings(tmp_path: Path, via: str) -> None:
    """Every command reads the TOML file and TIDINGS_*, archive or not: here the
    guard may only reach the test's server on 127.0.0.1 because the settings say so."""
    data = tmp_path / "fresh"
    env: dict[str, str | None] = dict(ENV)
    if via == "settings file":
        data.mkdir()
        (data / "tidings.toml").write_text('allow_private_hosts = ["127.0.0.1"]\n')
        env["TIDINGS_ALLOW_PRIVATE_HOSTS"] = None  # unset: only the file allows it
    with serve_app(blog_app()) as url:
        result = CliRunner().invoke(cli, ["--data", str(data), "discover", url + "/", "--json"],
                                    env=env)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["url"] == url + "/feed.xml"
    assert not (data / "tidings.sqlite3").exists()  # discovering makes no archive


def test_bad_input_gives_one_line_errors(tmp_path: Path) -> None:
    run(tmp_path, "init", "--empty")
    bad = tmp_path / "bad.opml"
    bad.write_text("<html>not opml")
    out = run(tmp_path, "import-opml", str(bad), code=1)
    assert out.count("\n") == 1 and "not valid XML" in out
    out = run(tmp_path, "add", "ftp://example.com/feed", code=2)
    assert "Traceback" not in out
    out = run(tmp_path, "items", "--since", "yesterday-ish", code=2)
    assert "--since" in out


def test_kill_9_mid_round_then_rerun_takes_over_at_once(tmp_path: Path) -> None:
    """A real subprocess is killed while collecting; the rerun completes the archive."""
    farm = Farm(feeds=60)  # the crash suite (test_attack_crash.py) runs 200
    for spec in farm.specs:
        spec.kind = "slow" if spec.kind in ("ok", "slow") else spec.kind
    with running_farm(farm):
        (tmp_path / "f.opml").write_bytes(farm.opml())
        run(tmp_path, "init", "--empty")
        run(tmp_path, "import-opml", str(tmp_path / "f.opml"))
        env = {**os.environ, **ENV, "TIDINGS_COLLECT_CONCURRENCY": "8",
               "TIDINGS_CPU_WORKERS": "2"}  # workers too must not outlive a kill
        cmd = [sys.executable, "-m", "tidings", "--data", str(tmp_path), "collect", "--once"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        db = tmp_path / "tidings.sqlite3"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with sqlite3.connect(db) as conn:
                done = conn.execute("select count(*) from fetch_runs where outcome != 'running'"
                                    ).fetchone()[0]
            if done >= 20:
                break
            time.sleep(0.05)
        helpers = psutil.Process(proc.pid).children(recursive=True)  # the parsing pool
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        _, alive = psutil.wait_procs(helpers, timeout=10)
        assert alive == [], "worker processes outlived the killed command"
        with sqlite3.connect(db) as conn:
            partial = conn.execute("select count(*) from items").fetchone()[0]
            finished = conn.execute("select count(distinct source_id) from fetch_runs "
                                    "where outcome != 'running'").fetchone()[0]
        assert 0 < partial < len(farm.unique_paths())
        # The killed round's leases name a process that is gone: the very next round
        # takes them over, closes the runs it left as abandoned and collects them all
        ids = [r["id"] for r in json.loads(run(tmp_path, "sources", "--json"))]
        out = collect_once(tmp_path)
        assert out["sources"] == len(ids) - finished
        with sqlite3.connect(db) as conn:
            outcomes = dict(conn.execute(
                "select outcome, count(*) from fetch_runs group by outcome").fetchall())
            reasons = {r[0] for r in conn.execute(
                "select error from fetch_runs where outcome = 'abandoned'")}
        assert "running" not in outcomes
        assert outcomes.get("abandoned", 0) > 0
        assert all(r and r.startswith("abandoned: the collecting process") for r in reasons)
        with sqlite3.connect(db) as conn:
            urls = [r[0] for r in conn.execute("select url from items")]
            hashes_ok = conn.execute(
                "select count(*) from items where content_hash is null or title is null"
            ).fetchone()[0]
        assert len(urls) == len(set(urls))
        assert {urlsplit(u).path for u in urls} == farm.unique_paths()
        assert hashes_ok == 0


def test_opml_folders_become_categories_and_come_back(tmp_path: Path) -> None:
    opml = tmp_path / "folders.opml"
    opml.write_text(
        '<?xml version="1.0"?><opml version="2.0"><head><title>x</title></head><body>'
        '<outline text="AI"><outline type="rss" text="A" xmlUrl="https://a.example/feed"/>'
        '<outline type="rss" text="B" xmlUrl="https://b.example/feed"/></outline>'
        '<outline type="rss" text="C" xmlUrl="https://c.example/feed"/></body></opml>')
    run(tmp_path, "init", "--empty")
    assert "3 sources added" in run(tmp_path, "import-opml", str(opml))
    assert "0 sources added, 3 already present" in run(tmp_path, "import-opml", str(opml))
    root = ET.fromstring(run(tmp_path, "export-opml"))
    folder = next(o for o in root.iter("outline") if o.get("text") == "AI")
    assert {o.get("xmlUrl") for o in folder} == {"https://a.example/feed",
                                                "https://b.example/feed"}
    assert len([o for o in root.iter("outline") if o.get("xmlUrl")]) == 3


def test_items_page_past_any_limit_and_export_streams_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`items --before` continues where a page ended; `export` writes every item once."""
    monkeypatch.setattr("tidings.app.transfer.EXPORT_PAGE", 7)  # many pages
    with running_farm(Farm(feeds=6)) as farm:
        opml = tmp_path / "farm.opml"
        opml.write_bytes(farm.opml())
        run(tmp_path, "init", "--empty")
        run(tmp_path, "import-opml", str(opml))
        run(tmp_path, "collect", "--once", "--no-extract")
    everything = json.loads(run(tmp_path, "items", "--limit", "10000", "--json"))
    assert len(everything) > 40
    seen: list[int] = []
    cursor: str | None = None
    while True:
        args = ["items", "--limit", "7", "--json"] + (["--before", cursor] if cursor else [])
        page = json.loads(run(tmp_path, *args))
        seen += [row["id"] for row in page]
        if len(page) < 7:
            break
        cursor = page[-1]["cursor"]
    assert seen == [row["id"] for row in everything], "pages in order, none lost or repeated"
    table = CliRunner().invoke(cli, ["--data", str(tmp_path), "items", "--limit", "3"],
                               env=ENV)
    assert "more: tidings items --before " in table.output
    assert "bad paging cursor" in run(tmp_path, "items", "--before", "yesterday", code=1)
    out = tmp_path / "all.jsonl"
    run(tmp_path, "export", "--out", str(out))
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [r["id"] for r in rows] == seen
    assert all("body" in r and "raw" in r for r in rows)
    streamed = [json.loads(line) for line in run(tmp_path, "export").splitlines()]
    assert len(streamed) == len(rows)
    assert not list(tmp_path.glob("*.partial"))


def _archive_of_two_sources(data: Path) -> None:
    """Three items of source a (one two days old), one of source b; no network."""
    run(data, "init", "--empty")
    now = datetime.now(UTC)
    tidings = Tidings.open(load_settings(data, env={}))
    try:
        async def fill() -> None:
            for sid in ("a", "b"):
                await tidings.sources.create(f"https://{sid}.example/feed", source_id=sid)
            entries = {"a": [(1, 1), (2, 1), (3, 48)], "b": [(4, 1)]}
            for sid, rows in entries.items():
                source = tidings.sources.get(sid)
                batch = [ItemData(key=f"k{n}", title=f"t{n}", url=f"https://{sid}.example/{n}",
                                  published_at=now - timedelta(hours=age)) for n, age in rows]
                await tidings.write(lambda unit, s=source, b=batch: upsert_items(unit, s, b, now))

        asyncio.run(fill())
    finally:
        tidings.close()


def test_export_counts_only_for_a_bar_and_counts_what_it_exports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _archive_of_two_sources(tmp_path)

    def no_count(*args: object) -> None:
        raise AssertionError("counted for a bar nobody sees")

    with monkeypatch.context() as patch:
        patch.setattr(Transfer, "export_total", no_count)
        out = tmp_path / "a.jsonl"
        run(tmp_path, "export", "--source", "a", "--out", str(out))  # no terminal: no bar
        assert len(out.read_text("utf-8").splitlines()) == 3
    tidings = Tidings.open(load_settings(tmp_path, env={}))
    try:
        total = tidings.transfer.export_total
        assert total(None, None) == 4
        assert total("a", None) == 3, "the source's items, not the archive's"
        assert total("a", datetime.now(UTC) - timedelta(days=1)) is None
    finally:
        tidings.close()
