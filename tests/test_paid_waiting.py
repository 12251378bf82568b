"""A paid source that cannot be read is not green (issue 30, item 2): a refused key or a
spent balance leaves health alone (R-SCHED-3) but shows the source as ``waiting`` with
the provider's reason in ``tidings sources``, the pages and the API; the round counts
it, ``collect`` exits 1, and the trouble is stored, so the next command still shows it
and holds calls back. The provider is a local fake of SocialData's contract."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from farm import serve_app
from paidfakes import FakeSocialData
from test_web_support import serve_web
from tidings.app import Tidings
from tidings.cli import cli
from tidings.model import Health
from tidings.settings import Settings

ENV = {"TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1", "TIDINGS_PER_HOST_DELAY": "0"}
KEY = "sk-test-9999"


def run(data: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env=ENV)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result.output


@pytest.fixture
def refusing() -> Iterator[tuple[FakeSocialData, str]]:
    """SocialData refusing our key (HTTP 401), served on 127.0.0.1."""
    api = FakeSocialData()
    api.keys = {"another-key"}
    with serve_app(api.app()) as base:
        yield api, base


def test_cli_a_refused_key_is_waiting_counted_and_exits_1(
    tmp_path: Path, refusing: tuple[FakeSocialData, str],
) -> None:
    api, base = refusing
    run(tmp_path, "init", "--empty")
    (tmp_path / "tidings.toml").write_text(
        f'[providers.socialdata]\nbase_url = "{base}"\napi_key = "{KEY}"\n', "utf-8")
    run(tmp_path, "add", "x:@alice")
    out = run(tmp_path, "collect", "--all", "--no-extract", code=1)
    assert "1 source: 0 ok, 0 failed, 1 waiting;" in out
    assert "1 waiting: socialdata: API key …9999 refused (HTTP 401)" in out
    assert KEY not in out
    sent = len(api.calls)
    assert sent == 1
    rows = json.loads(run(tmp_path, "sources", "--json"))
    assert rows[0]["state"] == "waiting" and rows[0]["health"] == Health.OK.value
    assert "…9999 refused" in rows[0]["waiting"] and rows[0]["fail_count"] == 0
    assert re.search(r"x-alice\s+waiting", run(tmp_path, "sources"))
    # a later process: the trouble was stored, so it is still shown and still holds back
    stats = json.loads(run(tmp_path, "stats", "--json"))
    assert "API key …9999 refused (HTTP 401)" in stats["paid_troubles"]["socialdata"]
    assert "paid API trouble: socialdata: API key …9999 refused" in run(tmp_path, "stats")
    again = json.loads(run(tmp_path, "collect", "--all", "--no-extract", "--json", code=1))
    assert again["waiting"] == 1 and "no call sent until" in again["waits"]["x-alice"]
    assert len(api.calls) == sent, "a second collect sends nothing while the key is refused"


def test_web_and_api_show_the_waiting_source_and_the_stored_trouble(
    settings: Settings, refusing: tuple[FakeSocialData, str],
) -> None:
    _, base = refusing
    providers = {"socialdata": {"base_url": base, "api_key": KEY, "daily_calls": 100}}

    async def collect() -> None:
        t = Tidings.open(replace(settings, providers=providers), create=True)
        await t.sources.add("x:@alice")
        await t.sources.add("x:@bob")
        report = await t.collection.round(extract=False)
        assert report.waiting == 2 and report.failed == 0
        await t.aclose()

    asyncio.run(collect())
    tid = Tidings.open(settings)  # another process: nothing of the first in memory
    server = serve_web(tid, settings)
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            listed = client.get("/api/v1/sources").json()
            assert {s["id"]: s["state"] for s in listed} == {"x-alice": "waiting",
                                                              "x-bob": "waiting"}
            assert all("…9999 refused" in s["waiting"] and s["health"] == "ok" for s in listed)
            one = client.get("/api/v1/sources/x-alice").json()
            assert one["state"] == "waiting" and one["last_success_at"] is None
            stats = client.get("/api/v1/stats").json()
            assert "…9999 refused" in stats["paid_troubles"]["socialdata"]
            page = client.get("/sources").text
            assert page.count('class="source h-waiting"') == 2
            assert '<span class="health h-waiting">2 waiting</span>' in page
            box = page.split('aria-label="Paid APIs"')[1].split("</section>")[0]
            assert "socialdata: API key …9999 refused (HTTP 401)" in box
            detail = client.get("/sources/x-alice").text
            assert 'class="dot h-waiting"' in detail and "<dt>Waiting</dt>" in detail
            assert KEY not in page + detail
    finally:
        server.stop()
        tid.close()
