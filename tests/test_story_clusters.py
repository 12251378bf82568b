"""Story clusters through the real archive: the job after upsert, restarts, rebuild,
hand edits remembered, explanations and heat (R-DEDUP-12, R-DEDUP-7)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tidings.app import Tidings
from tidings.errors import ConfigError, NotFoundError
from tidings.identity.heat import HeatMember, heat
from tidings.model import BodyState, ItemData, Source, SourceKind
from tidings.settings import load_settings
from tidings.store.base import ItemQuery
from units import upsert_items

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
STORY = [("Rust 1.85 released with the Rust 2024 edition",
          "The Rust team released Rust 1.85, which stabilizes the 2024 edition and async "
          "closures."),
         ("Rust 1.85 stabilizes the Rust 2024 edition and async closures",
          "Rust 1.85 is out today, stabilizing the Rust 2024 edition and async closures."),
         ("Announcing Rust 1.85.0 and Rust 2024",
          "The Rust team is happy to announce Rust 1.85.0, which stabilizes the 2024 edition "
          "and async closures.")]
OTHER = ("Harbour fire closes the ferry terminal overnight",
         "Firefighters spent the night at the harbour after a warehouse fire closed the "
         "ferry terminal.")


def open_tidings(path: Path) -> Tidings:
    return Tidings.open(load_settings(path, env={}), create=True, clock=lambda: NOW)


def entry(n: int, title: str, lead: str, hours_ago: float, backfill: bool = False) -> ItemData:
    return ItemData(title=title, url=f"https://news.example/{n}", guid=f"g{n}", summary=lead,
                    body=None, body_state=BodyState.OK,
                    published_at=NOW - timedelta(hours=hours_ago), backfill=backfill)


def seed(tid: Tidings) -> dict[str, int]:
    store = tid._store
    ids: dict[str, int] = {}
    texts = {"a": STORY[0], "b": STORY[1], "c": STORY[2], "d": OTHER}
    for n, (sid, (title, lead)) in enumerate(texts.items()):
        store.add_source(Source(id=sid, kind=SourceKind("rss"), url=f"https://{sid}.example/feed",
                                created_at=NOW, site_url=f"https://{sid}.example/"))
        upsert_items(store, store.get_source(sid), [entry(n, title, lead, 3 - n)], NOW)
        ids[sid] = store.list_items(ItemQuery(source_id=sid))[0].id
    return ids


@pytest.fixture
def archive(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    tid = open_tidings(tmp_path)
    ids = seed(tid)
    assert asyncio.run(tid.stories.cluster_pending()) == 4
    tid.close()
    return tmp_path, ids


def test_the_copies_share_a_story_that_survives_a_restart(
        archive: tuple[Path, dict[str, int]]) -> None:
    path, ids = archive
    tid = open_tidings(path)
    clusters = tid.stories.of_items(list(ids.values()))
    assert clusters[ids["a"]] == clusters[ids["b"]] == clusters[ids["c"]] == ids["a"]
    assert clusters[ids["d"]] == ids["d"]
    assert asyncio.run(tid.stories.cluster_pending()) == 0  # the bookmark is stored
    story = tid.stories.stories([ids["a"]])[ids["a"]]
    assert story.sources == 3 and 2.0 < story.heat < 3.0
    assert [s.cluster_id for s in tid.stories.trending()] == [ids["a"]]
    tid.close()


def test_explain_names_the_shared_shingles(archive: tuple[Path, dict[str, int]]) -> None:
    path, ids = archive
    tid = open_tidings(path)
    why = tid.stories.explain(ids["b"])
    assert why.cluster_id == ids["a"] and why.matched is not None
    assert {"rust", "edit"} <= set(why.peers[0].shared) and why.peers[0].similarity > 0.25
    with pytest.raises(NotFoundError):
        tid.stories.explain(999_999)
    tid.close()


def test_split_and_merge_are_remembered_across_a_rebuild(
        archive: tuple[Path, dict[str, int]]) -> None:
    path, ids = archive
    tid = open_tidings(path)
    assert asyncio.run(tid.stories.split(ids["c"])) == 2
    assert asyncio.run(tid.stories.merge(ids["a"], ids["d"])) == 1
    with pytest.raises(ConfigError):
        asyncio.run(tid.stories.merge(ids["a"], ids["a"]))
    seen: list[int] = []
    assert asyncio.run(tid.stories.rebuild(seen.append)) == 4 and sum(seen) == 4
    clusters = tid.stories.of_items(list(ids.values()))
    assert clusters[ids["c"]] == ids["c"]
    assert clusters[ids["a"]] == clusters[ids["b"]] == clusters[ids["d"]]
    tid.close()


def test_heat_counts_independent_sources_and_no_history() -> None:
    def m(source: str, site: str, hours: float, backfill: bool = False) -> HeatMember:
        at = NOW - timedelta(hours=hours)
        return HeatMember(source, site, at, at, at if not backfill else at + timedelta(days=5),
                          backfill)

    assert heat([m("a", "https://a.example", 0)], NOW) == pytest.approx(1.0)
    assert heat([m("a", "https://a.example", 24)], NOW) == pytest.approx(0.5)
    assert heat([m("a", "https://a.example", 49)], NOW) == 0.0
    same_owner = [m("a", "https://www.a.example", 0), m("a2", "https://a.example/blog", 0)]
    assert heat(same_owner, NOW) == pytest.approx(1.0)
    reprint = [m("a", "https://a.example", 0), m("mirror", "https://m.example", 0)]
    assert heat(reprint, NOW, {("mirror", "a")}) == pytest.approx(1.0)
    assert heat(reprint, NOW) == pytest.approx(2.0)
    assert heat([m("old", "https://o.example", 1, backfill=True)], NOW) == 0.0


def test_the_cluster_commands(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tidings.cli import cli

    tid = open_tidings(tmp_path)
    ids = seed(tid)
    tid.close()

    def run_cli(*args: str, code: int = 0) -> str:
        result = CliRunner().invoke(cli, ["--data", str(tmp_path), "cluster", *args],
                                    env={"TIDINGS_HOME": ""})
        assert result.exit_code == code, result.output
        return result.output

    assert "4 items clustered" in run_cli("rebuild")
    out = run_cli("explain", str(ids["c"]))
    assert f"story {ids['a']}" in out and "shared:" in out and "rust" in out
    assert '"cluster_id"' in run_cli("explain", str(ids["c"]), "--json")
    assert run_cli("explain", "424242", code=1) == "tidings: no item 424242\n"
    assert "split from 2 items" in run_cli("split", str(ids["c"]))
    assert "alone in its story" in run_cli("split", str(ids["c"]), code=1)
    assert "1 item moved" in run_cli("merge", str(ids["a"]), str(ids["d"]))


def test_the_runner_places_new_items(tmp_path: Path) -> None:
    from tidings.schedule.runner import Runner

    tid = open_tidings(tmp_path)
    ids = seed(tid)

    async def go() -> None:
        runner = Runner(tid.pipeline_env())
        runner.jobs["stories"].kick()
        while runner.jobs["stories"].running:
            await asyncio.sleep(0.02)
        clusters = tid.stories.of_items(list(ids.values()))
        assert clusters[ids["b"]] == ids["a"] and clusters[ids["d"]] == ids["d"]
        await tid.aclose()

    asyncio.run(go())


def test_two_placers_each_place_against_the_other_s_placements(tmp_path: Path) -> None:
    """Two processes' clusterers on one archive (cluster workers taking over from each
    other, or the runner beside `tidings cluster`): each warms its index again when
    the bookmark moved without it or a hand edit changed the clusters."""
    from tidings.pipeline.stories import Clusterer

    tid = open_tidings(tmp_path)
    ids = seed(tid)
    first, second = Clusterer(), Clusterer()
    with tid._store.write() as unit:
        assert first.step(unit, NOW, 1) == 1  # a
        assert second.step(unit, NOW, 1) == 1  # b, placed against a
        assert first.step(unit, NOW, 2) == 2  # c and d, against a and b
    assert first.index is not None and ids["b"] in first.index
    clusters = tid.stories.of_items(list(ids.values()))
    assert clusters[ids["a"]] == clusters[ids["b"]] == clusters[ids["c"]] == ids["a"]
    assert asyncio.run(tid.stories.split(ids["c"])) == 2  # by the facade's own clusterer
    with tid._store.write() as unit:
        assert first.step(unit, NOW) == 0
    assert first.index is not None and first.index.cluster_of(ids["c"]) == ids["c"]
    tid.close()
