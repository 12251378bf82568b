"""Stories by meaning through the real archive (issue 31): a Chinese report and an
outlet's own wording join the story, a same-day announcement of the same company
stays apart, and no item is embedded twice across restarts and rebuilds."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from test_story_clusters import NOW, entry, open_tidings
from tidings.app import Tidings
from tidings.model import Source, SourceKind
from tidings.pipeline.stories import local_encoder
from tidings.store.base import ItemQuery
from units import upsert_items

#: one event told by three outlets in their own words, one of them in Chinese, and the
#: same company's other news of the same day
TEXTS = {
    "wire": ("Nordwind Motors recalls 40,000 e-scooters over battery fires",
             "Nordwind Motors is recalling 40,000 of its S2 electric scooters after reports "
             "that their batteries can overheat and catch fire while charging."),
    "blog": ("Own an S2? Stop charging it: Nordwind pulls 40,000 scooters",
             "Owners of the Nordwind S2 scooter are told to stop charging it at once, as "
             "the company takes back 40,000 units over a fire risk in the battery pack."),
    "zh": ("Nordwind召回4万辆S2电动滑板车，电池存在起火风险",
           "Nordwind宣布召回4万辆S2电动滑板车，原因是电池在充电时可能过热起火。"),
    "other": ("Nordwind Motors opens its first store in Lisbon",
              "Nordwind Motors opened a flagship store in Lisbon on Tuesday, its first shop "
              "in Portugal, with test rides of its scooters and e-bikes."),
}


class Counting:
    """The bundled encoder, counting the texts it embeds."""

    model = local_encoder().model

    def __init__(self) -> None:
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return local_encoder().encode(texts)


def _add(tid: Tidings, sid: str, n: int, hours_ago: float, backfill: bool = False,
         text: str | None = None) -> int:
    store = tid._store
    store.add_source(Source(id=sid, kind=SourceKind("rss"), url=f"https://{sid}.example/feed",
                            created_at=NOW, site_url=f"https://{sid}.example/"))
    title, lead = TEXTS[text or sid]
    upsert_items(store, store.get_source(sid), [entry(n, title, lead, hours_ago, backfill)],
                 NOW)
    return store.list_items(ItemQuery(source_id=sid))[0].id


def test_meaning_joins_other_wordings_and_languages_not_other_news(tmp_path: Path) -> None:
    tid = open_tidings(tmp_path)
    ids = {sid: _add(tid, sid, n, 5 - n) for n, sid in enumerate(TEXTS)}
    counting = Counting()
    tid.stories.clusterer.encoder = counting
    assert asyncio.run(tid.stories.cluster_pending()) == 4
    clusters = tid.stories.of_items(list(ids.values()))
    assert clusters[ids["wire"]] == clusters[ids["blog"]] == clusters[ids["zh"]] == ids["wire"]
    assert clusters[ids["other"]] == ids["other"]  # same company, same day, other news
    assert len(counting.texts) == 4
    why = tid.stories.explain(ids["zh"])
    assert why.cluster_id == ids["wire"] and all(p.meaning > 0.3 for p in why.peers)
    tid.close()


def test_no_item_is_embedded_twice(tmp_path: Path) -> None:
    """Each meaning is stored beside its placement: a restart warms the index from
    storage and a rebuild reads them back; only new items are embedded."""
    tid = open_tidings(tmp_path)
    ids = {sid: _add(tid, sid, n, 5 - n) for n, sid in enumerate(["wire", "blog"])}
    first = Counting()
    tid.stories.clusterer.encoder = first
    asyncio.run(tid.stories.cluster_pending())
    assert len(first.texts) == 2
    tid.close()
    tid = open_tidings(tmp_path)
    again = Counting()
    tid.stories.clusterer.encoder = again
    assert asyncio.run(tid.stories.rebuild()) == 2
    assert again.texts == []
    ids["zh"] = _add(tid, "zh", 2, 3)
    assert asyncio.run(tid.stories.cluster_pending()) == 1
    assert len(again.texts) == 1 and "Nordwind" in again.texts[0]
    assert tid.stories.of_items([ids["zh"]]) == {ids["zh"]: ids["wire"]}
    tid.close()


def test_a_history_item_joins_its_story_and_adds_no_heat(tmp_path: Path) -> None:
    """A backfilled report (history) in the other language is one of the story's
    members, and the story is exactly as hot as without it."""
    tid = open_tidings(tmp_path)
    ids = {sid: _add(tid, sid, n, 5 - n) for n, sid in enumerate(["wire", "blog"])}
    asyncio.run(tid.stories.cluster_pending())
    before = tid.stories.stories([ids["wire"]])[ids["wire"]].heat
    ids["archive"] = _add(tid, "archive", 9, 60, backfill=True, text="zh")
    asyncio.run(tid.stories.cluster_pending())
    assert tid.stories.of_items([ids["archive"]]) == {ids["archive"]: ids["wire"]}
    story = tid.stories.stories([ids["wire"]])[ids["wire"]]
    assert story.sources == 3 and story.heat == before
    tid.close()


def test_the_batch_is_embedded_before_the_write(tmp_path: Path) -> None:
    """``prepare`` embeds and places the next batch outside the writer; the write step
    that stores it (``commit``) embeds nothing, and stores what was embedded."""
    from tidings.pipeline.stories import Clusterer

    tid = open_tidings(tmp_path)
    ids = {sid: _add(tid, sid, n, 5 - n) for n, sid in enumerate(TEXTS)}
    counting = Counting()
    clusterer = Clusterer(counting)
    batch = clusterer.prepare(tid._store, NOW)
    assert batch is not None and len(batch.members) == 4 and len(counting.texts) == 4
    with tid._store.write() as unit:
        assert clusterer.commit(unit, batch) == 4
    assert len(counting.texts) == 4, "the write step embedded nothing"
    assert clusterer.prepare(tid._store, NOW) is None, "nothing left, nothing embedded again"
    assert len(counting.texts) == 4
    clusters = tid.stories.of_items(list(ids.values()))
    assert clusters[ids["zh"]] == clusters[ids["blog"]] == ids["wire"] != clusters[ids["other"]]
    stored = tid._store.story_members(list(ids.values()))
    assert all(m.meaning is not None and m.meaning.model == counting.model for m in stored)
    tid.close()
