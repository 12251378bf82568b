"""Clustering quality on the labelled sets (tests/story_eval.py), figures printed.

The issue's targets are precision >= 0.95 and recall >= 0.85 on the real-style set
and 100% of the farm's wire groups folded; docs/clustering.md has where the current
index stands and why. These floors hold what it reaches, so a change that makes
clustering worse fails here. The farm's copies are items as their feeds list them,
links included: a copy carrying only its own teaser is found by the page it links to.
"""

from __future__ import annotations

from story_eval import farm_items, real_style, score, wire_groups_folded
from tidings.identity.shingles import story_shingles, story_text
from tidings.identity.storyindex import StoryIndex, item_of

YEARS_US = 10 * 365 * 24 * 3_600_000_000


def cluster(items: list, window_us: int) -> dict[int, int]:  # type: ignore[type-arg]
    index = StoryIndex(window_us=window_us)
    out = {}
    for x in items:
        sh = story_shingles(story_text(x.title, x.lead, x.body))
        item = item_of(x.item_id, x.source, int(x.at.timestamp() * 1_000_000), sh, x.link)
        out[x.item_id] = index.place(item).cluster_id
    return out


def test_real_style_set() -> None:
    items = real_style()
    truth = {x.item_id: x.story for x in items}
    scores = score(truth, cluster(items, 72 * 3_600_000_000))
    print("real-style:", scores.line())
    assert scores.precision >= 0.95 and scores.b3_precision >= 0.97
    assert scores.recall >= 0.85 and scores.b3_recall >= 0.93  # the targets


def test_farm_wire_groups() -> None:
    items = farm_items(120)
    truth = {x.item_id: x.story for x in items}
    found = cluster(items, YEARS_US)  # the farm spreads copies over months
    scores, folded = score(truth, found), wire_groups_folded(truth, found)
    print("farm:", scores.line(), f"wire groups folded {folded:.3f}")
    assert folded == 1.0 and scores.recall == 1.0  # every copy of every wire story
    assert scores.b3_precision >= 0.99 and scores.precision >= 0.83


def test_meaning_sets() -> None:
    """Issue 31's labelled sets, with the bundled encoder: the rule's thresholds were
    chosen on ``tune``; ``check`` is held out. The floors hold what they reach (the
    issue's targets: P >= 0.97, R >= 0.90, cross-language R >= 0.85, no near-miss merge;
    docs/clustering.md says which near miss still merges in the held-out part: its
    precision is 0.9697), and
    MinHash alone, on the same items, stays far below (the layer is what finds them)."""
    from story_eval import cluster_items, embedded, meaning_scores, meaning_set, near_misses

    for part, floor, recall, cross, near in (("tune", 1.0, 0.95, 0.95, 0),
                                             ("check", 0.965, 0.93, 0.93, 4)):
        items = meaning_set(part)
        views = embedded(items)
        got = meaning_scores(items, cluster_items(StoryIndex(), views), near_misses(part))
        words = meaning_scores(items, cluster_items(StoryIndex(meaning=None), views),
                               near_misses(part))
        print(f"{part}: {got.line()}\n  MinHash alone: {words.line()}")
        assert got.overall.precision >= floor and got.overall.recall >= recall
        assert got.cross_recall >= cross and got.near_miss_merges <= near
        assert got.roundup_merges == 0
        assert words.overall.recall < 0.5 and words.cross_recall < 0.3
