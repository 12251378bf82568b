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
