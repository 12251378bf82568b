"""Adding X and WeChat accounts like feeds (CLI, OPML, bulk file) and seeing their spend."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from netservers import serve
from paidfakes import FakeDajiala
from tidings.app import Tidings
from tidings.app.accounts import account_ref, read_accounts
from tidings.cli import cli
from tidings.errors import ConfigError
from tidings.model import CostClass, SourceKind
from tidings.settings import Settings, load_settings

ENV = {"TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1", "TIDINGS_PER_HOST_DELAY": "0"}


def run(data: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env=ENV)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result.output


@pytest.mark.parametrize(("text", "kind", "url"), [
    ("x:@karpathy", SourceKind("x"), "https://x.com/karpathy"),
    ("x:karpathy", SourceKind("x"), "https://x.com/karpathy"),
    ("https://twitter.com/karpathy", SourceKind("x"), "https://x.com/karpathy"),
    ("https://x.com/@karpathy/", SourceKind("x"), "https://x.com/karpathy"),
    ("wechat:gh_1234abcd", SourceKind("wechat"), "wechat:gh_1234abcd"),
    ("weixin:机器之心", SourceKind("wechat"), "wechat:机器之心"),
])
def test_account_shorthands(text: str, kind: SourceKind, url: str) -> None:
    ref = account_ref(text)
    assert ref is not None and (ref.kind, ref.url) == (kind, url)


@pytest.mark.parametrize("text", ["https://x.com/home", "x:@way_too_long_handle_here",
                                  "https://example.com/feed", "wechat:", "x:@bad-char"])
def test_what_is_not_an_account(text: str) -> None:
    assert account_ref(text) is None


def test_a_file_with_bad_lines_names_them_all_and_adds_nothing() -> None:
    with pytest.raises(ConfigError, match=r"line 2: 'nope'; line 4: 'x:@no-dash'"):
        read_accounts(["x:@a", "nope", "# comment", "x:@no-dash", ""])


def test_add_import_accounts_and_opml(tmp_path: Path) -> None:
    run(tmp_path, "init", "--empty")
    assert "added x-karpathy" in run(tmp_path, "add", "x:@karpathy")
    assert "added wx-gh_42" in run(tmp_path, "add", "wechat:gh_42")
    listing = tmp_path / "accounts.txt"
    listing.write_text("# AI people\n" + "\n".join(f"x:@person{i}" for i in range(120))
                       + "\nwechat:jiqizhixin  # 机器之心\nx:@karpathy\n")
    out = json.loads(run(tmp_path, "import-accounts", "--json", str(listing)))
    assert len(out["added"]) == 121 and out["already_present"] == 1
    bad = tmp_path / "bad.txt"
    bad.write_text("x:@fine\nnot an account\n")
    assert "line 2" in run(tmp_path, "import-accounts", str(bad), code=1)
    opml = tmp_path / "a.opml"
    opml.write_text('<opml version="2.0"><body><outline text="AI">'
                    '<outline text="Sam" xmlUrl="x:@sama"/>'
                    '<outline text="量子位" xmlUrl="wechat:QbitAI"/></outline></body></opml>')
    assert "2 sources added" in run(tmp_path, "import-opml", str(opml))
    rows = {r["id"]: r for r in json.loads(run(tmp_path, "sources", "--json"))}
    assert len(rows) == 125
    settings = load_settings(tmp_path, env={})
    t = Tidings.open(settings)
    try:
        sam, qbit = t.sources.get("x-sama"), t.sources.get("wx-qbitai")
    finally:
        t.close()
    assert (sam.kind, sam.folder, sam.config["handle"]) == (SourceKind("x"), "AI", "sama")
    assert sam.cost_class is CostClass.PAID_LIST and sam.interval_min == 30
    assert (qbit.kind, qbit.interval_min) == (SourceKind("wechat"), 15)
    exported = run(tmp_path, "export-opml")
    assert 'xmlUrl="https://x.com/sama"' in exported and 'xmlUrl="wechat:QbitAI"' in exported
    run(tmp_path, "add", "x:@karpathy", code=1)
    refused = run(tmp_path, "add", "x:@newone", "--set", "batch=ai", code=2)
    assert "batch" in refused and "tidings:" in refused, "unknown keys are refused"


async def test_an_opml_account_line_no_kind_reads_is_noted_not_added(settings: Settings) -> None:
    opml = (b'<opml version="2.0"><body><outline text="ok" xmlUrl="x:@fine"/>'
            b'<outline text="bad" xmlUrl="x:@no-dash-allowed"/>'
            b'<outline text="odd" xmlUrl="mp:"/></body></opml>')
    t = Tidings.open(settings, create=True)
    try:
        notes: list[str] = []
        added, present = await t.transfer.import_opml(opml, notes=notes)
        assert [s.id for s in added] == ["x-fine"] and present == 0
        assert [s.id for s in t.sources.all()] == ["x-fine"]
        assert len(notes) == 2 and all("neither an http(s) URL nor an account (x:@handle, "
                                       "wechat:<account id>)" in n for n in notes), notes
    finally:
        await t.aclose()


def test_stats_show_spend_per_provider_and_day(tmp_path: Path) -> None:
    run(tmp_path, "init", "--empty")
    now = datetime.now(UTC)

    async def collect() -> None:
        api = FakeDajiala(clock=lambda: now)
        api.publish("acct", "a post", now - timedelta(hours=1))
        async with serve(api.app()) as base:
            settings = load_settings(tmp_path, env={}, overrides={
                "allow_private_hosts": "127.0.0.1", "per_host_delay": 0})
            providers = {"dajiala": {"base_url": base, "api_key": "sk-test-0001",
                                     "daily_cost": 5}}
            t = Tidings.open(replace(settings, providers=providers))
            await t.sources.add("wechat:acct")
            await t.collection.round(extract=False)
            await t.aclose()

    asyncio.run(collect())
    text = run(tmp_path, "stats")
    assert "paid API dajiala today: 2 calls, cost 0.17" in text
    assert f"{now.astimezone().date().isoformat()} dajiala: 2 calls" in text
    assert "sk-test-0001" not in text
    figures = json.loads(run(tmp_path, "stats", "--json"))
    day = figures["spend_by_day"][now.astimezone().date().isoformat()]
    assert day["dajiala"] == {"calls": 2, "cost": 0.17}
