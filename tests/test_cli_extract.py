"""``tidings extract``, ``collect --no-extract``, ``reparse`` and ``prune-raw`` from the CLI."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from extract_site import Entry, Site, article_page
from farm import serve_app
from tidings.app import SourceUpdate, Tidings
from tidings.cli import cli
from tidings.settings import load_settings

ENV = {"TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1", "TIDINGS_PER_HOST_DELAY": "0"}
CHINESE = "防洪闸门周二正式启用，工程历时三年。" * 6


def run(data: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env=ENV)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    with serve_app(s.app()) as url:
        s.base = url
        s.page("/a/1", article_page(1, title="Gates open", author="Ann Lee"))
        s.feeds["/feed.xml"] = [Entry("Gates open", "/a/1", format_datetime(
            datetime.now(UTC) - timedelta(hours=1), usegmt=True))]
        yield s


def test_extract_a_file_as_text_html_and_json(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(article_page(3, title="Gates open", author="Ann Lee"), "utf-8")
    nowhere = tmp_path / "no-archive"
    text = run(nowhere, "extract", str(page))
    assert "Report number 3, part 0" in text and "Report number 3, part 4" in text
    assert "Copyright" not in text and "<p>" not in text and "Home" not in text
    html = run(nowhere, "extract", str(page), "--html")
    assert html.startswith("<") and "<p>" in html and "<script" not in html
    data = json.loads(run(nowhere, "extract", "--json", str(page)))
    assert data["state"] == "ok" and data["author"] == "Ann Lee"
    assert data["title"] == "Gates open" and data["chars"] > 200
    assert not nowhere.exists(), "extract needs no archive and makes none"


def test_extract_reads_stdin_with_a_page_url(tmp_path: Path) -> None:
    html = article_page(5, title="Gates open", images=("/img/9.png",))
    result = CliRunner().invoke(cli, ["--data", str(tmp_path), "extract", "-", "--json",
                                      "--url", "https://news.example/a/5"],
                                input=html.encode(), env=ENV)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert "Report number 5" in data["text"]
    assert 'src="https://news.example/img/9.png"' in data["html"]


def test_extract_decodes_a_file_by_its_declared_charset(tmp_path: Path) -> None:
    page = tmp_path / "gb.html"
    html = (f'<html><head><meta charset="gb2312"><title>闸门</title></head><body><article>'
            f"<p>{CHINESE}</p><p>{CHINESE}</p></article></body></html>")
    page.write_bytes(html.encode("gb2312"))
    out = run(tmp_path, "extract", str(page))
    assert "防洪闸门周二正式启用" in out


def test_extract_a_url(tmp_path: Path, site: Site) -> None:
    data = json.loads(run(tmp_path / "none", "extract", "--json", site.base + "/a/1"))
    assert data["state"] == "ok" and "Report number 1" in data["text"]
    assert site.requests["/a/1"] == 1
    out = run(tmp_path, "extract", site.base + "/missing", code=1)
    assert out.startswith("tidings: ") and "404" in out and out.count("\n") == 1


def test_extract_bad_targets_fail_in_one_line(tmp_path: Path) -> None:
    out = run(tmp_path, "extract", str(tmp_path / "nope.html"), code=2)
    assert "neither an http(s) URL nor a readable file" in out and "Traceback" not in out
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"")
    out = run(tmp_path, "extract", str(empty), code=1)
    assert out.startswith("tidings: ") and out.count("\n") == 1


def test_collect_extracts_unless_told_not_to(tmp_path: Path, site: Site) -> None:
    run(tmp_path, "init", "--empty")
    run(tmp_path, "add", site.base + "/feed.xml")
    first = json.loads(run(tmp_path, "collect", "--once", "--no-extract", "--json"))
    assert first["created"] == 1 and first["extraction"] is None
    assert site.requests["/a/1"] == 0
    items = json.loads(run(tmp_path, "items", "--json"))
    assert items[0]["body_state"] == "pending"
    second = json.loads(run(tmp_path, "collect", "--all", "--json"))
    assert second["extraction"]["ok"] == 1 and second["extraction"]["tried"] == 1
    items = json.loads(run(tmp_path, "items", "--json"))
    assert items[0]["body_state"] == "ok"
    assert "Gates open" in run(tmp_path, "search", "Report number"), "the body is indexed"

    requests = site.total
    settings = load_settings(tmp_path, env={})
    t = Tidings.open(settings)
    try:
        source = t.sources.all()[0]
        asyncio.run(t.sources.update(
            source.id, SourceUpdate(config={"extract": {"body_selector": "h1"}})))
    finally:
        t.close()
    out = json.loads(run(tmp_path, "reparse", "--json"))
    assert out["pages"] == 1 and out["feeds"] == 2 and out["errors"] == 0
    assert out["revised"] == 0, "a selector that finds no article leaves the body alone"
    text = run(tmp_path, "reparse", "--source", source.id, "--since", "1d")
    assert text.startswith("reparsed 2 feed responses and 1 page: 0 items revised")
    assert site.total == requests, "reparse sent a request"
    out2 = run(tmp_path, "reparse", "--source", "nope", code=1)
    assert "nope" in out2 and out2.count("\n") == 1
    assert "raw responses removed" in run(tmp_path, "prune-raw")
