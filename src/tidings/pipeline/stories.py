"""Story clustering as the product runs it (R-DEDUP-12): the online job, a rebuild,
hand edits, explanations and heat.

Items are clustered *after* they are stored, by a job that reads what
``upsert_items`` created since its bookmark: every way an item enters (collection,
push, import, re-parse) goes through ``upsert_items`` alone, and clustering
follows it whatever the way. The index of the last 72 hours lives in the process
(``Clusterer``); each placement is stored with the shingles it was made by, so a
restart rebuilds the index from storage without reading a body. The same warm
start happens whenever storage moved under the index: another process placed
items (the bookmark is not where this index left it) or stories were edited by
hand (a counter every edit and rebuild moves), so any number of processes may
run the job, one batch at a time each (the bookmark's swap decides), and each
places against every earlier placement.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from tidings.errors import ConfigError, NotFoundError
from tidings.identity.heat import HEAT_WINDOW, HeatMember, heat
from tidings.identity.meaning import (
    MODEL,
    Encoder,
    LocalEncoder,
    Marks,
    marks_of,
    meaning_text,
    pack_vector,
    unpack_vector,
)
from tidings.identity.shingles import shingle_hash, story_shingles, story_text
from tidings.identity.storyindex import (
    WINDOW_US,
    StoryIndex,
    StoryItem,
    item_of,
    jaccard,
    link_hash,
    similarity,
)
from tidings.store.items import ItemReads
from tidings.store.ops import OpsReads, OpsWrites
from tidings.store.stories import (
    StoredMeaning,
    StoriesReads,
    StoriesWrites,
    StoryInput,
    StoryLink,
    StoryMember,
    StoryRow,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "STORY_MARK",
    "ClusterReads",
    "ClusterUnit",
    "Clusterer",
    "Explanation",
    "Story",
    "StoryBatch",
    "StoryTexts",
    "explain",
    "finish_rebuild",
    "merge",
    "split",
    "story_heat",
    "trending",
]

STORY_MARK = "stories:last-item"
#: moved by every hand edit and rebuild: an index warmed before it is out of date
EDITS_MARK = "stories:edits"
BATCH = 500
WINDOW = timedelta(microseconds=WINDOW_US)


def _us(when: datetime) -> int:
    return int(when.timestamp() * 1_000_000)


def story_item(x: StoryInput) -> StoryItem:
    """An item as the index sees it by its words alone (its meaning: ``_embedded``)."""
    sh = story_shingles(story_text(x.title, x.summary, x.body))
    return item_of(x.item_id, x.source_id, _us(x.at), sh, x.url)


_LOCAL: list[LocalEncoder] = []


def local_encoder() -> LocalEncoder:
    """The process's one bundled encoder (its model loads once, on first use)."""
    if not _LOCAL:
        _LOCAL.append(LocalEncoder())
    return _LOCAL[0]


def _stored(meaning: StoredMeaning | None, model: str) -> tuple[np.ndarray, Marks] | None:
    if meaning is None or meaning.model != model:
        return None
    return unpack_vector(meaning.vector), Marks.unpack(meaning.marks)


def _embedded(inputs: Sequence[StoryInput], encoder: Encoder | None
              ) -> tuple[list[StoryItem], list[StoredMeaning | None]]:
    """The index's view of each input with its meaning: read back when stored by this
    model, else embedded (in one batch, away from the writer: ``Clusterer.prepare``
    runs on a thread); the new ones returned to be stored."""
    texts = [story_text(x.title, x.summary, x.body) for x in inputs]
    items = [item_of(x.item_id, x.source_id, _us(x.at), story_shingles(t), x.url)
             for x, t in zip(inputs, texts, strict=True)]
    fresh: list[StoredMeaning | None] = [None] * len(inputs)
    if encoder is None:
        return items, fresh
    known = [_stored(x.meaning, encoder.model) for x in inputs]
    todo = [i for i, k in enumerate(known) if k is None]
    texts_todo = [meaning_text(texts[i], inputs[i].title, inputs[i].summary, inputs[i].body)
                  for i in todo]
    vectors = list(encoder.encode(texts_todo)) if todo else []
    for i, vector in zip(todo, vectors, strict=True):
        marks = marks_of(texts[i])
        known[i] = (vector, marks)
        fresh[i] = StoredMeaning(encoder.model, pack_vector(vector), marks.pack())
    out = [replace(item, vector=k[0], marks=k[1]) if k is not None else item
           for item, k in zip(items, known, strict=True)]
    return out, fresh


@dataclass(slots=True)
class _Links:
    apart: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    together: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))

    @classmethod
    def of(cls, links: Iterable[StoryLink]) -> _Links:
        out = cls()
        for link in links:
            side = out.apart if link.apart else out.together
            side[link.a].add(link.b)
            side[link.b].add(link.a)
        return out


def _place(index: StoryIndex, inputs: Sequence[StoryInput], links: _Links,
           encoder: Encoder | None = None) -> list[StoryMember]:
    items, fresh = _embedded(inputs, encoder)
    index.learn(items)
    out = []
    for x, item, meaning in zip(inputs, items, fresh, strict=True):
        p = index.place(item, apart=links.apart.get(x.item_id, ()),
                        together=links.together.get(x.item_id, ()))
        out.append(StoryMember(x.item_id, p.cluster_id, x.source_id, x.at, p.similarity,
                               p.matched, p.item.hashes, p.item.title, p.item.exact,
                               p.item.latin, x.url, meaning))
    return out


class ClusterReads(StoriesReads, OpsReads, Protocol):
    """What placing items reads: the story tables, and the job's bookmarks in ``meta``."""


class ClusterUnit(ClusterReads, StoriesWrites, OpsWrites, Protocol):
    """What storing placements and hand edits needs: the bookmarks are swapped, not set,
    so that two processes placing from one bookmark store it once."""


class StoryTexts(StoriesReads, ItemReads, Protocol):
    """What an explanation reads: the stories, and the items' texts their shingles are
    recomputed from."""


@dataclass(frozen=True, slots=True)
class StoryBatch:
    """Placements made away from the writer (``Clusterer.prepare``), to be stored."""

    mark: str | None  # the bookmark they were read from
    edits: str | None  # the edit counter their index reflects
    last: str  # the bookmark once they are stored
    members: list[StoryMember]
    index: StoryIndex  # the index with them placed


class Clusterer:
    """The process's story index and the job that feeds it (one per process)."""

    def __init__(self, encoder: Encoder | None = None, *, meaning: bool = True) -> None:
        """``encoder``: what embeds items (the bundled model by default); ``meaning``
        False: shingles alone, nothing embedded (the benchmark's baseline)."""
        self.index: StoryIndex | None = None
        #: the bookmark and the edit counter as the index reflects them
        self.synced: tuple[str | None, str | None] = (None, None)
        self.encoder: Encoder | None = (encoder or local_encoder()) if meaning else None

    def _new_index(self) -> StoryIndex:
        return StoryIndex() if self.encoder is not None else StoryIndex(meaning=None)

    def _warm(self, store: StoriesReads, now: datetime) -> StoryIndex:
        index = self._new_index()
        model = self.encoder.model if self.encoder is not None else MODEL
        for m in store.story_window(now - WINDOW):
            item = StoryItem(m.item_id, m.source_id, _us(m.at), m.hashes, m.title, m.exact,
                             m.latin, link_hash(m.url))
            known = _stored(m.meaning, model)
            if known is not None:
                item = replace(item, vector=known[0], marks=known[1])
            index.add(item, m.cluster_id)
        return index

    def step(self, unit: ClusterUnit, now: datetime, limit: int = BATCH) -> int:
        """Place the next items created since the bookmark, in one unit; returns how many."""
        batch = self.prepare(unit, now, limit)
        return self.commit(unit, batch) if batch is not None else 0

    def prepare(self, store: ClusterReads, now: datetime, limit: int = BATCH) -> StoryBatch | None:
        """Read the next items since the bookmark and place them in the index: the CPU
        of placement, done away from the writer (None: nothing waits). The index is
        lent to the batch until :meth:`commit` stores it."""
        mark, edits = store.get_mark(STORY_MARK), store.get_mark(EDITS_MARK)
        if self.index is None or (mark, edits) != self.synced:
            self.index = self._warm(store, now)
            self.synced = (mark, edits)
        inputs = store.story_inputs(int(mark or 0), limit)
        if not inputs:
            return None
        index, self.index = self.index, None  # back once the placements are stored
        members = _place(index, inputs, _Links.of(store.story_links()), self.encoder)
        return StoryBatch(mark, edits, str(inputs[-1].item_id), members, index)

    def commit(self, unit: ClusterUnit, batch: StoryBatch) -> int:
        """One write step: store a prepared batch, unless another process placed from
        the same bookmark first or a hand edit moved the stories meanwhile (0: the
        index, placed against what is no longer there, warms again next time)."""
        if unit.get_mark(EDITS_MARK) != batch.edits \
                or not unit.swap_mark(STORY_MARK, batch.mark, batch.last):
            return 0
        unit.put_story_members(batch.members)
        self.index, self.synced = batch.index, (batch.last, batch.edits)
        return len(batch.members)

    def restart(self) -> StoryIndex:
        """An empty index, for a rebuild that replays the archive."""
        self.index = self._new_index()
        return self.index

    def replay(self, inputs: Sequence[StoryInput], links: Sequence[StoryLink]
               ) -> list[StoryMember]:
        """Place one page of a rebuild (items in time order) in the index."""
        assert self.index is not None
        return _place(self.index, inputs, _Links.of(links), self.encoder)


def finish_rebuild(unit: ClusterUnit) -> None:
    """After a rebuild: merges made by hand applied, the job's bookmark at the top."""
    _apply_merges(unit, unit.story_links())
    unit.swap_mark(STORY_MARK, unit.get_mark(STORY_MARK), str(unit.max_item_id()))
    _edited(unit)


def _edited(unit: ClusterUnit) -> None:
    """Clusters changed under every process's index: each warms again before placing."""
    old = unit.get_mark(EDITS_MARK)
    unit.swap_mark(EDITS_MARK, old, str(int(old or 0) + 1))


def _apply_merges(unit: ClusterUnit, links: Sequence[StoryLink]) -> None:
    """Merges made by hand hold even for items further apart than the window."""
    for link in links:
        if link.apart:
            continue
        clusters = unit.story_clusters([link.a, link.b])
        ca, cb = clusters.get(link.a), clusters.get(link.b)
        if ca is not None and cb is not None and ca != cb:
            ids = [r.item_id for r in unit.story_rows([cb])]
            unit.move_story_members(ids, ca)


# ------------------------------------------------------------------ hand edits
def _cluster_of(store: StoriesReads, item_id: int) -> int:
    cluster = store.story_clusters([item_id]).get(item_id)
    if cluster is None:
        raise NotFoundError(f"item {item_id} is not clustered yet (run: tidings cluster rebuild)")
    return cluster


def split(unit: ClusterUnit, item_id: int, now: datetime) -> int:
    """Take ``item_id`` out of its cluster, for good: it stands alone and is remembered
    apart from every item it was with. Returns how many it was split from."""
    cluster = _cluster_of(unit, item_id)
    others = [r.item_id for r in unit.story_rows([cluster]) if r.item_id != item_id]
    if not others:
        raise ConfigError(f"item {item_id} is alone in its story already")
    unit.move_story_members([item_id], item_id)
    if cluster == item_id:  # it started the cluster: the rest keep the earliest id left
        unit.move_story_members(others, min(others))
    for other in others:
        unit.add_story_link(StoryLink(item_id, other, True, now))
    _edited(unit)
    return len(others)


def merge(unit: ClusterUnit, item_id: int, other_id: int, now: datetime) -> int:
    """Put ``other_id``'s whole story into ``item_id``'s, for good. Returns how many moved."""
    if item_id == other_id:
        raise ConfigError("an item cannot be merged with itself")
    target, source = _cluster_of(unit, item_id), _cluster_of(unit, other_id)
    unit.add_story_link(StoryLink(item_id, other_id, False, now))
    _edited(unit)
    if target == source:
        return 0
    ids = [r.item_id for r in unit.story_rows([source])]
    return unit.move_story_members(ids, target)


# ------------------------------------------------------------------- reading
@dataclass(frozen=True, slots=True)
class Story:
    cluster_id: int
    heat: float
    rows: list[StoryRow]  # earliest first

    @property
    def sources(self) -> int:
        return len({r.source_id for r in self.rows})


def _heat_members(rows: Sequence[StoryRow]) -> list[HeatMember]:
    return [HeatMember(r.source_id, r.site_url, r.at, r.published_at, r.discovered_at,
                       r.backfill) for r in rows]


def story_heat(store: StoriesReads, cluster_ids: Sequence[int], now: datetime) -> dict[int, Story]:
    """The stories of these clusters, with their heat at ``now``."""
    rows = store.story_rows(cluster_ids)
    reprints = store.reprint_pairs([r.source_id for r in rows])
    by_cluster: dict[int, list[StoryRow]] = defaultdict(list)
    for r in rows:
        by_cluster[r.cluster_id].append(r)
    return {c: Story(c, heat(_heat_members(rs), now, reprints), rs)
            for c, rs in by_cluster.items()}


def trending(store: StoriesReads, now: datetime, limit: int = 30) -> list[Story]:
    """Stories told by two or more sources in the last 48 h, hottest first."""
    ids = store.hot_stories(now - HEAT_WINDOW, limit * 3)
    stories = [s for s in story_heat(store, ids, now).values() if s.heat > 0]
    stories.sort(key=lambda s: (-s.heat, -s.cluster_id))
    return stories[:limit]


@dataclass(frozen=True, slots=True)
class Peer:
    item_id: int
    source_id: str
    title: str
    similarity: float  # of the shingles
    shared: list[str]
    meaning: float | None = None  # the cosine of the two meanings (None: either has none)
    language: str = ""  # "zh" for a report written mostly in CJK, else "en"


@dataclass(frozen=True, slots=True)
class Explanation:
    item_id: int
    cluster_id: int
    similarity: float  # with the member it joined (0 when it started the story)
    matched: int | None
    peers: list[Peer]  # the other members, the closest in meaning (else words) first
    languages: list[str] = field(default_factory=list)  # of the story's members


def _cosine(a: StoredMeaning | None, b: StoredMeaning | None) -> float | None:
    if a is None or b is None or a.model != b.model:
        return None
    return round(float(unpack_vector(a.vector) @ unpack_vector(b.vector)), 4)


def _language(meaning: StoredMeaning | None) -> str:
    return "" if meaning is None else Marks.unpack(meaning.marks).language


def explain(store: StoryTexts, item_id: int) -> Explanation:
    """Why ``item_id`` is where it is: each other member's similarity, the shingles
    they share (recomputed from the stored texts) and how close their meanings are
    (from the stored vectors)."""
    placed = store.story_members([item_id])
    if not placed:
        raise NotFoundError(f"item {item_id} is not clustered yet (run: tidings cluster rebuild)")
    me = placed[0]
    rows = [r for r in store.story_rows([me.cluster_id]) if r.item_id != item_id]
    mine = _shingles(store, item_id)
    stored = {m.item_id: m for m in store.story_members([r.item_id for r in rows])}
    peers = []
    for r in rows:
        theirs = _shingles(store, r.item_id)
        other = stored.get(r.item_id)
        score = similarity(me.hashes, other.hashes, me.title, other.title, me.latin,
                           other.latin) if other \
            else jaccard(frozenset(map(shingle_hash, mine)), frozenset(map(shingle_hash, theirs)))
        meaning = other.meaning if other else None
        peers.append(Peer(r.item_id, r.source_id, r.title, score, sorted(mine & theirs),
                          _cosine(me.meaning, meaning), _language(meaning)))
    peers.sort(key=lambda p: (-(p.meaning or 0.0), -p.similarity, p.item_id))
    languages = sorted({x for x in [_language(me.meaning), *(p.language for p in peers)] if x})
    return Explanation(item_id, me.cluster_id, me.similarity, me.matched, peers, languages)


def _shingles(store: ItemReads, item_id: int) -> frozenset[str]:
    item = store.get_item(item_id)
    return story_shingles(story_text(item.title, item.summary, item.body)).all
