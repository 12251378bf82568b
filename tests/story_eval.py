"""The labelled sets of story clustering and the scores they are judged by.

Two sets: the hand-written real-style coverage in ``tests/data/stories`` and the
wire stories of the benchmark feed farm (``shared/bench/feedfarm.py``), each
copy as a separate item the way it is listed by its feed. Scores: pairwise
precision and recall (over pairs of items put together) and B-cubed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

LABELLED = Path(__file__).parent / "data" / "stories" / "labelled.json"
MEANING = Path(__file__).parent / "data" / "stories" / "meaning.json"
FARM = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "feedfarm.py"
T0 = datetime(2026, 3, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Labelled:
    item_id: int
    story: str
    source: str
    at: datetime
    title: str
    lead: str
    body: str | None = None
    link: str | None = None
    history: bool = False  # backfill: a member of its story that adds no heat


def meaning_set(part: str) -> list[Labelled]:
    """The labelled set of stories told in other words and languages (issue 31):
    ``tune`` (thresholds are chosen on it) or ``check`` (held out)."""
    rows = json.loads(MEANING.read_text(encoding="utf-8"))[part]
    items = [Labelled(i + 1, r[0], r[1], T0 + timedelta(hours=r[2]), r[3], r[4],
                      history=len(r) > 5 and bool(r[5])) for i, r in enumerate(rows)]
    items.sort(key=lambda x: (x.at, x.item_id))
    return items


def near_misses(part: str) -> set[frozenset[str]]:
    """Pairs of stories that read alike but must stay apart."""
    pairs = json.loads(MEANING.read_text(encoding="utf-8"))["near_misses"][part]
    return {frozenset(p) for p in pairs}


def real_style() -> list[Labelled]:
    rows = json.loads(LABELLED.read_text())["items"]
    return [Labelled(i + 1, story, source, T0 + timedelta(hours=hours), title, lead)
            for i, (story, source, hours, title, lead) in enumerate(rows)]


def _farm_module() -> object:
    for path in (FARM, Path("/work/shared/bench/feedfarm.py")):
        if path.exists():
            spec = importlib.util.spec_from_file_location("feedfarm", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules["feedfarm"] = module
            spec.loader.exec_module(module)
            return module
    raise FileNotFoundError(f"the feed farm is missing: {FARM}")


def farm_items(feeds: int = 300) -> list[Labelled]:
    """Every item of the farm's first ``feeds`` feeds, labelled by wire story (an item
    that is nobody's reprint is a story of its own)."""
    farm = _farm_module().Farm(feeds, latency="none")  # type: ignore[attr-defined]
    out: list[Labelled] = []
    for i in range(feeds):
        for seq, it in enumerate(farm.items[i]):
            story = f"wire-{it.wire}" if it.wire is not None else f"own-{i}-{seq}"
            out.append(Labelled(len(out) + 1, story, f"site{i}", it.published, it.title,
                                it.summary, it.content, it.link))
    out.sort(key=lambda x: (x.at, x.item_id))
    return out


@dataclass(frozen=True)
class Scores:
    precision: float
    recall: float
    b3_precision: float
    b3_recall: float

    def line(self) -> str:
        return (f"pairwise P={self.precision:.3f} R={self.recall:.3f}  "
                f"B-cubed P={self.b3_precision:.3f} R={self.b3_recall:.3f}")


def _pairs(groups: Mapping[object, Sequence[int]]) -> set[tuple[int, int]]:
    out = set()
    for members in groups.values():
        ms = sorted(members)
        out.update((a, b) for i, a in enumerate(ms) for b in ms[i + 1:])
    return out


def score(truth: Mapping[int, str], found: Mapping[int, int]) -> Scores:
    """Pairwise and B-cubed precision/recall of ``found`` (item -> cluster) against
    ``truth`` (item -> story)."""
    by_story: dict[object, list[int]] = defaultdict(list)
    by_cluster: dict[object, list[int]] = defaultdict(list)
    for item, story in truth.items():
        by_story[story].append(item)
        by_cluster[found[item]].append(item)
    gold, got = _pairs(by_story), _pairs(by_cluster)
    precision = len(gold & got) / len(got) if got else 1.0
    recall = len(gold & got) / len(gold) if gold else 1.0
    b3p = b3r = 0.0
    for item in truth:
        mine = set(by_cluster[found[item]])
        real = set(by_story[truth[item]])
        common = len(mine & real)
        b3p += common / len(mine)
        b3r += common / len(real)
    n = len(truth)
    return Scores(precision, recall, b3p / n, b3r / n)


def language(x: Labelled) -> str:
    """zh when a quarter or more of the title and lead is Han script, else en."""
    text = x.title + x.lead
    han = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    return "zh" if han * 4 >= len(text) else "en"


@dataclass(frozen=True)
class MeaningScores:
    """The issue's figures: pairwise precision and recall, recall of the pairs told in
    two languages, and merges of near-miss stories and of roundups."""

    overall: Scores
    cross_recall: float
    cross_pairs: int
    near_miss_merges: int
    roundup_merges: int

    def line(self) -> str:
        return (f"{self.overall.line()}  cross-language R={self.cross_recall:.3f} "
                f"({self.cross_pairs} pairs)  near-miss merges {self.near_miss_merges}  "
                f"roundup merges {self.roundup_merges}")


def meaning_scores(items: Sequence[Labelled], found: Mapping[int, int],
                   near: set[frozenset[str]]) -> MeaningScores:
    truth = {x.item_id: x.story for x in items}
    overall = score(truth, found)
    cross = hit = near_merged = roundups = 0
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            together = found[a.item_id] == found[b.item_id]
            if a.story == b.story and language(a) != language(b):
                cross += 1
                hit += together
            elif a.story != b.story and together:
                near_merged += frozenset((a.story, b.story)) in near
                roundups += a.story.startswith("roundup") or b.story.startswith("roundup")
    return MeaningScores(overall, hit / cross if cross else 1.0, cross, near_merged, roundups)


def wire_groups_folded(truth: Mapping[int, str], found: Mapping[int, int]) -> float:
    """Share of wire stories (two copies or more) whose copies all share one cluster."""
    groups: dict[str, set[int]] = defaultdict(set)
    sizes: dict[str, int] = defaultdict(int)
    for item, story in truth.items():
        if story.startswith("wire-"):
            groups[story].add(found[item])
            sizes[story] += 1
    multi = [s for s in groups if sizes[s] > 1]
    return sum(1 for s in multi if len(groups[s]) == 1) / len(multi) if multi else 1.0


class _Lazy:
    """One encoder for every set scored in a process (the model loads once)."""

    def __init__(self) -> None:
        self._encoder: object | None = None

    def encode(self, texts: list[str]) -> object:
        if self._encoder is None:
            from tidings.identity.meaning import LocalEncoder

            self._encoder = LocalEncoder()
        return self._encoder.encode(texts)  # type: ignore[attr-defined]


_ENCODER = _Lazy()


def embedded(items: Sequence[Labelled]) -> list[object]:
    """The index's view of each item, vectors and marks included (one batch through the
    bundled encoder, as the job embeds a batch)."""
    from tidings.identity.meaning import marks_of, meaning_text
    from tidings.identity.shingles import story_shingles, story_text
    from tidings.identity.storyindex import item_of

    texts = [story_text(x.title, x.lead, x.body) for x in items]
    vectors = _ENCODER.encode([meaning_text(t, x.title, x.lead, x.body)
                               for x, t in zip(items, texts, strict=True)]) if items else []
    return [item_of(x.item_id, x.source, int(x.at.timestamp() * 1_000_000), story_shingles(t),
                    x.link, v, marks_of(t)) for x, t, v in zip(items, texts, vectors, strict=True)]


def cluster_items(index: object, views: Sequence[object]) -> dict[int, int]:
    """Place the views in time order (as given); item id -> cluster id."""
    index.learn(views)  # type: ignore[attr-defined]
    return {v.item_id: index.place(v).cluster_id for v in views}  # type: ignore[attr-defined]
