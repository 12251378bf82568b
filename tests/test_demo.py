"""The offline demo flow end to end: discover, collect, list, search (CJK too); and
``tidings demo``, which does it all on what the run command installs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path

import httpx
from click.testing import CliRunner

from tidings.app import ItemQuery, Tidings
from tidings.cli import cli
from tidings.cli.commands_demo import demo_site
from tidings.settings import load_settings

ENV = {"TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1", "TIDINGS_PER_HOST_DELAY": "0"}


def run(data: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env=ENV)
    assert result.exit_code == 0, result.output
    return result.output


def test_demo_site_end_to_end(tmp_path: Path) -> None:
    with demo_site() as url:
        run(tmp_path, "init", "--empty")
        lab = json.loads(run(tmp_path, "add", url + "/", "--json"))
        assert lab["url"] == url + "/lab/feed.xml", "the comments feed must rank lower"
        cn = json.loads(run(tmp_path, "add", url + "/cn/", "--json"))
        assert cn["url"] == url + "/cn/atom.xml"
        run(tmp_path, "add", url + "/json/feed.json")
        summary = json.loads(run(tmp_path, "collect", "--once", "--json"))
        assert summary["failed"] == 0 and summary["ok"] == 3
        assert summary["created"] == 5  # the wire story is listed twice, stored once
        items = json.loads(run(tmp_path, "items", "--json"))
        urls = {i["url"] for i in items}
        assert url + "/wire/open-weights" in urls, "tracking parameters must be dropped"
        assert url + "/lab/posts/search-latency" in urls, "relative links resolved"
        teaser = next(i for i in items if i["url"].endswith("honest-user-agent"))
        assert teaser["body_state"] == "ok", "the teaser was replaced by the article's text"
        assert all(i["body_state"] == "ok" for i in items)
        for query, expected in [("数据库", "数据库全文检索"), ("检索", "数据库全文检索"),
                                ("检", "数据库全文检索"), ("latency", "Measuring search"),
                                ("intitle:二元组", "数据库全文检索")]:
            hits = json.loads(run(tmp_path, "search", "--json", query))
            assert any(h["title"].startswith(expected) for h in hits), (query, hits)


def test_the_demo_command_sets_up_its_own_archive_once(tmp_path: Path) -> None:
    """`tidings demo` serves the packaged site, adds its three feeds to a separate
    archive, collects; run again on the same port it adds nothing twice."""
    data = tmp_path / "demo"
    with demo_site() as url:  # only to find a free port for the demo's own site
        port = url.rsplit(":", 1)[1]
    args = ["--data", str(data), "demo", "--no-serve", "--site-port", port]
    first = CliRunner().invoke(cli, args, env={"TIDINGS_ALLOW_PRIVATE_HOSTS": None})
    assert first.exit_code == 0, first.output
    assert "3 sources added, 5 new items" in first.output
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and "0 sources added" in again.output, again.output
    hits = json.loads(run(data, "search", "--json", "检索"))
    assert hits and hits[0]["title"].startswith("数据库全文检索")


def test_the_demo_site_is_dated_relative_to_now() -> None:
    """Served today, the newest sample item is an hour old, whatever the files say."""
    now = datetime.now(UTC)
    with demo_site() as url:
        feed = httpx.get(url + "/json/feed.json").json()
        rss = httpx.get(url + "/lab/feed.xml").text
        article = httpx.get(url + "/lab/posts/honest-user-agent/").text
    newest = datetime.fromisoformat(feed["items"][0]["date_published"])
    assert timedelta(0) < now - newest <= timedelta(hours=2)
    dates = [parsedate_to_datetime(d.split("</")[0]) for d in rss.split("<pubDate>")[1:]]
    assert len(dates) == 3 and max(dates) - min(dates) == timedelta(hours=25, minutes=30)
    assert all(now - d < timedelta(days=3) for d in dates)
    assert f'content="{sorted(dates)[1]:%Y-%m-%dT%H:%M:%S}Z"' in article.replace("+00:00", "Z")


def test_the_first_today_of_the_demo_is_not_empty(tmp_path: Path) -> None:
    """The first page a newcomer sees lists the sample site's news (issue 32)."""
    data = tmp_path / "demo"
    with demo_site() as url:
        port = url.rsplit(":", 1)[1]
    done = CliRunner().invoke(cli, ["--data", str(data), "demo", "--no-serve",
                                    "--site-port", port])
    assert done.exit_code == 0, done.output
    tid = Tidings.open(load_settings(data, env={}))
    try:
        today = tid.items.briefs(ItemQuery(since=datetime.now(UTC) - timedelta(hours=24),
                                     include_backfill=False))
        history = tid.items.briefs(ItemQuery(include_backfill=True))
    finally:
        tid.close()
    assert len(today) >= 2, [i.title for i in history]
    assert any(i.backfill for i in history), "the oldest sample item is history"


#: what only the dev extra installs: the demo must not need any of it (issue 15)
DEV_ONLY = ("pytest", "hypothesis", "playwright", "schemathesis", "httpx", "trustme", "mypy")


def test_the_demo_runs_without_the_dev_extra(tmp_path: Path) -> None:
    """`tidings demo` in a process where every dev-only package fails to import."""
    block = "".join(f"sys.modules[{name!r}] = None; " for name in DEV_ONLY)
    code = (f"import sys; {block}from tidings.cli import main; "
            f"sys.argv = ['tidings', '--data', {str(tmp_path / 'demo')!r}, 'demo', "
            "'--no-serve', '--site-port', '0']; main()")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIDINGS_")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "3 sources added, 5 new items" in done.stdout
