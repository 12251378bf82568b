"""Sources listing the same page tell one story, whatever their words (R-DEDUP-12):
a wire story under each site's tracking parameters with each site's own teaser."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from test_story_clusters import NOW, entry, open_tidings
from tidings.identity.shingles import story_shingles, story_text
from tidings.identity.storyindex import StoryIndex, item_of, link_hash
from tidings.model import Source, SourceKind
from tidings.pipeline.stories import Clusterer
from tidings.store.base import ItemQuery
from units import upsert_items

WIRE = "https://wire.example.net/2026/story-153-a447717d"
HOUR_US = 3_600_000_000


def placed(index: StoryIndex, item_id: int, source: str, title: str, lead: str,
           url: str | None) -> int:
    sh = story_shingles(story_text(title, lead, None))
    return index.place(item_of(item_id, source, item_id * HOUR_US, sh, url)).cluster_id


def test_link_hash_drops_tracking_and_front_pages() -> None:
    assert link_hash(f"{WIRE}?utm_source=site7&utm_medium=rss") == link_hash(WIRE) != 0
    assert link_hash(None) == link_hash("") == 0
    assert link_hash("https://site7.example.com/") == link_hash("https://site7.example.com") == 0
    assert link_hash("not a url") == 0


def test_one_page_under_two_teasers_is_one_story() -> None:
    index = StoryIndex()
    first = placed(index, 1, "site71", "Their Year", "Harbour cranes idle as dockers vote "
                   "on a new contract offer tonight.", f"{WIRE}?utm_source=site71")
    # another source, its own teaser, a one-word title in common: the page decides
    assert placed(index, 2, "site7", "Their Year", "Quarterly figures for the regional "
                  "orchard cooperative surprised growers.", f"{WIRE}?utm_campaign=daily") == first
    # the same source listing the page again (another guid) is the same story too
    assert placed(index, 3, "site71", "Year", "Snow closes mountain passes in the north "
                  "for a second day running.", f"{WIRE}?utm_campaign=feed") == first
    # other pages with other words stay apart
    assert placed(index, 4, "site9", "Their Year", "Library extends weekend opening "
                  "hours after a petition from students.",
                  "https://site9.example.com/2026/10/other.html") == 4


def test_a_restart_still_knows_the_pages(tmp_path: Path) -> None:
    """The page is read back with the window's placements, so a warm index finds it
    (in the archive one page is mostly one item already: identity keys by URL; the
    link still counts where it does not, e.g. a source keyed by URL and title)."""
    tid = open_tidings(tmp_path)
    store = tid._store
    store.add_source(Source(id="a", kind=SourceKind("rss"), url="https://a.example/feed",
                            created_at=NOW, site_url="https://a.example/"))
    first = entry(1, "Harbour strike vote tonight", "Dockers vote on the contract offer "
                  "at the harbour union hall tonight.", 3)
    upsert_items(store, store.get_source("a"), [replace(first, url=f"{WIRE}?utm_source=a")],
                 NOW)
    assert asyncio.run(tid.stories.cluster_pending()) == 1
    tid.close()
    tid = open_tidings(tmp_path)
    index = Clusterer()._warm(tid._store, NOW)
    item = item_of(99, "b", int(NOW.timestamp() * 1_000_000),
                   story_shingles(story_text("Orchard figures surprise", "Quarterly figures "
                                             "for the orchard cooperative surprised growers.",
                                             None)), f"{WIRE}?utm_campaign=daily")
    a = tid._store.list_items(ItemQuery(source_id="a"))[0].id
    assert index.place(item).cluster_id == a
    tid.close()


def test_a_translation_keeps_the_story_names() -> None:
    """A Chinese report of an English story shares its names (DeepSeek, R1, OpenAI,
    o1), which its Chinese words dilute; names alone, fewer than four, are no story."""
    english = ("DeepSeek claims its R1 reasoning model beats OpenAI's o1 on certain benchmarks",
               "The Chinese AI lab DeepSeek released R1 under an MIT license, claiming it "
               "matches OpenAI's o1 on math, coding and reasoning benchmarks while costing "
               "far less to run.")
    chinese = ("DeepSeek发布R1推理模型，性能比肩OpenAI o1",
               "深度求索正式发布推理模型R1，采用MIT协议开源，数学和代码能力比肩o1。")
    index = StoryIndex()
    assert placed(index, 1, "techcrunch", *english, None) == 1
    assert placed(index, 2, "36kr", *chinese, None) == 1
    few = ("OpenAI发布o1新版本", "OpenAI今天发布了o1推理模型的更新，速度明显提升，价格下降。")
    assert placed(index, 3, "ithome", *few, None) == 3
