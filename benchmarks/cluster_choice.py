"""MinHash + LSH (datasketch) against SimHash (simhash) on the labelled story sets.

    .venv/bin/python benchmarks/cluster_choice.py

Both see the same shingles (tidings.identity.shingles) and cluster online in time
order; printed per set: pairwise and B-cubed precision/recall, the farm's wire
groups folded, items/s. The choice and its figures are in docs/clustering.md.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from simhash import Simhash, SimhashIndex

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import story_eval
from tidings.identity.shingles import story_shingles, story_text
from tidings.identity.storyindex import StoryIndex, StoryItem, item_of

YEARS_US = 10 * 365 * 24 * 3_600_000_000


def _us(item: story_eval.Labelled) -> int:
    return int(item.at.timestamp() * 1_000_000)


def _item(x: story_eval.Labelled) -> tuple[StoryItem, frozenset[str]]:
    sh = story_shingles(story_text(x.title, x.lead, x.body))
    return item_of(x.item_id, x.source, _us(x), sh), sh.all


def run_minhash(items: list[story_eval.Labelled], window_us: int,
                threshold: float | None = None) -> dict[int, int]:
    index = StoryIndex(window_us=window_us) if threshold is None else \
        StoryIndex(window_us=window_us, threshold=threshold)
    return {x.item_id: index.place(_item(x)[0]).cluster_id for x in items}


def run_simhash(items: list[story_eval.Labelled], window_us: int, k: int = 12
                ) -> dict[int, int]:
    del window_us  # the labelled sets fit one window; SimhashIndex keeps everything
    index = SimhashIndex([], k=k)
    found: dict[int, int] = {}
    for x in items:
        _, sh = _item(x)
        if not sh:
            found[x.item_id] = x.item_id
            continue
        s = Simhash(list(sh))
        near = [int(n) for n in index.get_near_dups(s)]
        best = min(near, key=lambda n: (s.distance(sims[n]), n)) if near else None
        found[x.item_id] = found[best] if best is not None else x.item_id
        sims[x.item_id] = s
        index.add(str(x.item_id), s)
    return found


sims: dict[int, Simhash] = {}


def _report(name: str, items: list[story_eval.Labelled], window_us: int) -> None:
    truth = {x.item_id: x.story for x in items}
    runs_of = (("minhash-lsh", run_minhash),
               ("simhash k=3", lambda i, w: run_simhash(i, w, 3)),
               ("simhash k=12", run_simhash))
    for label, fn in runs_of:
        runs = []
        found: dict[int, int] = {}
        for _ in range(3):
            sims.clear()
            t = time.perf_counter()
            found = fn(items, window_us)
            runs.append(len(items) / (time.perf_counter() - t))
        scores = story_eval.score(truth, found)
        folded = story_eval.wire_groups_folded(truth, found)
        print(f"{name:10} {label:13} {scores.line()}  wire folded={folded:.3f}  "
              f"{statistics.median(runs):,.0f} items/s")


def main() -> None:
    real = story_eval.real_style()
    _report("real-style", real, 72 * 3_600_000_000)
    _report("farm", story_eval.farm_items(60), YEARS_US)


if __name__ == "__main__":
    main()
