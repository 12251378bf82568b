"""``tidings preview`` and ``tidings add`` on pages without feeds (issue 17)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from click.testing import CliRunner

from farm import serve_app
from tidings.cli import cli

ENV = {"TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1", "TIDINGS_PER_HOST_DELAY": "0"}
DATA = Path(__file__).parent / "data"
CARDS = (DATA / "web_list" / "company_news_cards.html").read_bytes()
CARDS_CONFIG = json.loads((DATA / "web_list" / "company_news_cards.source.json").read_text())


def run(data: Path, *args: str, code: int = 0, stdin: str | None = None) -> str:
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env=ENV, input=stdin)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def site() -> Iterator[str]:
    app = web.Application()

    async def page(request: web.Request) -> web.Response:
        return web.Response(body=CARDS, content_type="text/html")

    async def bare(request: web.Request) -> web.Response:
        return web.Response(text="<html><body><p>Nothing here.</p></body></html>",
                            content_type="text/html")

    app.router.add_get("/news", page)
    app.router.add_get("/bare", bare)
    with serve_app(app) as url:
        yield url


@pytest.fixture
def data(tmp_path: Path) -> Path:
    run(tmp_path, "init", "--empty")
    return tmp_path


def test_preview_shows_what_would_be_stored_and_stores_nothing(data: Path, site: str) -> None:
    out = run(data, "preview", "web_list", f"{site}/news", "--config",
              json.dumps(CARDS_CONFIG["config"]))
    assert out.startswith(f"preview (web_list) {site}/news")
    assert "Introducing Lumen 4" in out and "2026-09-24 16:00" in out
    report = json.loads(run(data, "preview", "web_list", f"{site}/news", "--json",
                            "--config", json.dumps(CARDS_CONFIG["config"])))
    assert [e["verdict"] for e in report["entries"]] == ["create"] * 4
    assert report["entries"][0]["key"] == f"{site}/news/introducing-lumen-4"
    assert json.loads(run(data, "sources", "--json")) == []


def test_preview_of_a_rule_that_finds_nothing_exits_1_with_the_rule_named(
    data: Path, site: str,
) -> None:
    out = run(data, "preview", "web_list", f"{site}/news", "--config",
              '{"item": "div.gone"}', code=1)
    assert "FAILED" in out and "item selector 'div.gone' matched nothing" in out


def test_preview_refuses_a_misspelt_key_before_fetching(data: Path, site: str) -> None:
    out = run(data, "preview", "web_list", f"{site}/news", "--config", '{"itme": "a"}', code=2)
    assert "did you mean 'item'?" in out and "Traceback" not in out


def test_add_loads_a_source_file(data: Path, site: str, tmp_path: Path) -> None:
    spec = tmp_path / "lab.json"
    spec.write_text(json.dumps({"kind": "web_list", "url": f"{site}/news",
                                "title": "Lumen news", "config": CARDS_CONFIG["config"]}))
    run(data, "add", "--config", str(spec))
    (source,) = json.loads(run(data, "sources", "--json"))
    assert (source["kind"], source["title"]) == ("web_list", "Lumen news")
    config = json.loads(run(data, "config", source["id"], "--json"))
    assert config["item"] == "section.news-grid article.card"


def test_add_on_a_page_without_a_feed_proposes_web_list_rules(data: Path, site: str) -> None:
    out = run(data, "add", f"{site}/news", stdin="y\n")
    assert "proposed web_list rules" in out and "Introducing Lumen 4" in out
    (source,) = json.loads(run(data, "sources", "--json"))
    assert source["kind"] == "web_list"
    assert json.loads(run(data, "config", source["id"], "--json"))["date"] == "time"
    assert "added" in out


def test_add_on_a_bare_page_says_there_is_nothing_to_propose(data: Path, site: str) -> None:
    out = run(data, "add", f"{site}/bare", code=1)
    assert "no repeated list of links" in out
    out = run(data, "add", f"{site}/news", stdin="n\n", code=1)
    assert "not added" in out


def test_add_loads_a_ready_example(data: Path) -> None:
    example = Path(__file__).parent.parent / "examples" / "sources" / "anthropic_news.source.json"
    run(data, "add", "--config", str(example))
    (source,) = json.loads(run(data, "sources", "--json"))
    assert (source["url"], source["title"]) == ("https://www.anthropic.com/news",
                                                "Anthropic news")
    assert json.loads(run(data, "config", source["id"], "--json"))["title"] == "h3"


def test_a_config_file_that_is_not_there_is_one_line(data: Path) -> None:
    out = run(data, "preview", "web_list", "https://x.example/", "--config", "nofile.json",
              code=2)
    assert "nofile.json: cannot read it" in out and "internal error" not in out
