"""A story told in two languages in the reader and the CLI (issue 31): Trending ranks
it once and names its languages; why an item is in it shows each other member's
closeness in meaning beside the shared shingles."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from test_story_meaning import TEXTS
from test_web_support import ServerThread, Spec, add_items, add_source, open_archive, run, serve_web
from tidings.app import Tidings
from tidings.cli import cli
from tidings.settings import load_settings


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[tuple[Tidings, ServerThread, dict[str, int], Path]]:
    data = tmp_path_factory.mktemp("meaning") / "data"
    settings = load_settings(data, env={})
    tid = open_archive(settings)
    for sid in TEXTS:
        add_source(tid, sid, sid.title())
    made = add_items(tid, [Spec(title, source_id=sid, summary=lead, body=None,
                                age=timedelta(hours=4 - n))
                           for n, (sid, (title, lead)) in enumerate(TEXTS.items())])
    ids = dict(zip(TEXTS, made, strict=True))
    assert run(tid.stories.cluster_pending) == 4
    server = serve_web(tid, settings)
    yield tid, server, ids, data
    server.stop()
    tid.close()


def test_trending_ranks_the_two_language_story_once(
        site: tuple[Tidings, ServerThread, dict[str, int], Path]) -> None:
    _tid, server, ids, _data = site
    page = httpx.get(server.url + "/trending").text
    assert page.count('class="row story"') == 1
    assert f'data-cluster="{ids["wire"]}"' in page and "+2 sources" in page
    assert "EN · ZH" in page and "Lisbon" not in page
    article = httpx.get(f"{server.url}/item/{ids['zh']}").text
    assert "2 other sources of this story" in article, article[article.find("<main"):][:3000]
    assert "EN · ZH" in article, article[article.find("story-sources"):][:1500]


def test_why_shows_meaning_beside_the_shingles(
        site: tuple[Tidings, ServerThread, dict[str, int], Path]) -> None:
    tid, server, ids, data = site
    why = tid.stories.explain(ids["zh"])
    assert why.languages == ["en", "zh"]
    assert {p.item_id for p in why.peers} == {ids["wire"], ids["blog"]}
    assert all(p.meaning is not None and p.meaning > 0.4 for p in why.peers)
    assert [p.language for p in why.peers] == ["en", "en"]
    page = httpx.get(f"{server.url}/item/{ids['zh']}/story").text
    assert f"meaning {why.peers[0].meaning:.2f}" in page and "shingles" in page
    assert "told in EN · ZH" in page
    result = CliRunner().invoke(cli, ["--data", str(data), "cluster", "explain",
                                      str(ids["zh"])], env={"TIDINGS_HOME": ""})
    assert result.exit_code == 0, result.output
    assert "told in en, zh" in result.output and "meaning  shingles" in result.output
    assert f"{why.peers[0].meaning:.2f}" in result.output
