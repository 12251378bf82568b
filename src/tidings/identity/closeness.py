"""Which story of the window an item's meaning is closest to (R-DEDUP-12).

The window's vectors live in ``tidings.identity.vectors``. An item is compared
with a *story*, not with its single closest member: its closeness to a story is
its cosine with the mean of the story's members (centroid linkage), so one
member that reads like another story (a report that mentions the news it
follows) does not chain the two. A roundup ("this week in AI", 早报) joins none.
How the thresholds were chosen: docs/clustering.md, "Meaning".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tidings.identity.meaning import NO_MARKS, Marks
from tidings.identity.vectors import VectorWindow

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DEFAULT_RULE", "Closest", "MeaningRule", "Neighbours", "closest_story"]


@dataclass(frozen=True, slots=True)
class MeaningRule:
    """When meaning puts an item in a story (cosines of unit vectors). The defaults were
    chosen on the tuning part of tests/data/stories/meaning.json, in the middle of the
    range where it has no false merge (docs/clustering.md, "Meaning")."""

    #: closeness to a story at which an item joins it on meaning alone
    join: float = 0.48
    #: a lower closeness, when the item and the story's closest member agree on a
    #: figure, a version or (for a CJK report) two Latin-script names
    agreed: float = 0.42
    #: a MinHash match (not a verbatim copy or the same page) joins only a story this
    #: close in meaning: shared words, another event
    veto: float = 0.48
    #: another story whose best cosine is within this of the chosen one's contests it
    margin: float = 0.08
    #: how an item's closeness to a story is taken: "centroid" (the cosine with the
    #: members' mean vector) or "mean" (the mean of its cosines with them)
    linkage: str = "centroid"
    #: the bar rises by this much a day since the story's latest report: a follow-up a
    #: day later (a speech about yesterday's decision) reads like the news it follows
    fade: float = 0.15
    #: two stories whose members' mean vectors are this alike are one story told apart
    #: (neither contests the other)
    kin: float = 0.45


DEFAULT_RULE = MeaningRule()


@dataclass(frozen=True, slots=True)
class Closest:
    """The story meaning puts an item in: its closest member there, the cosine with
    that member and the item's closeness to the whole story."""

    item_id: int
    cluster_id: int
    cosine: float
    closeness: float


@dataclass(slots=True)
class Neighbours:
    """An item's cosines to the window's stories it may join: cluster id -> (its best
    cosine with a member, that member)."""

    window: VectorWindow
    vector: np.ndarray
    scores: np.ndarray
    best: dict[int, tuple[float, int]]

    @classmethod
    def of(cls, window: VectorWindow, vector: np.ndarray, scores: np.ndarray, floor: float,
           cluster_of: Callable[[int], int | None]) -> Neighbours:
        """``cluster_of`` gives the cluster of a window item the item may join (None
        for one of its own source, out of its time window or split from it by hand)."""
        best: dict[int, tuple[float, int]] = {}
        for item_id, cos in window.above(scores, floor):
            cluster = cluster_of(item_id)
            if cluster is not None and cos > best.get(cluster, (-1.0, 0))[0]:
                best[cluster] = (cos, item_id)
        return cls(window, vector, scores, best)

    def closeness(self, cluster: int, linkage: str = "centroid") -> float:
        return self.window.closeness(self.vector, cluster, linkage)

    def contested(self, cluster: int, rule: MeaningRule) -> bool:
        """Another story is about as close (within ``rule.margin`` of this one's best
        cosine) and is not this one told apart: a report that mentions the news it
        follows belongs to neither."""
        mine = self.best.get(cluster, (0.0, 0))[0]
        return any(other != cluster and cos >= mine - rule.margin
                   and self.window.between(cluster, other) < rule.kin
                   for other, (cos, _) in self.best.items())


def closest_story(near: Neighbours, marks: Marks, rule: MeaningRule,
                  quiet: Callable[[int], float] = lambda _c: 0.0) -> Closest | None:
    """The story whose closeness reaches the rule (``join``; ``agreed`` when the item and
    the story's closest member agree on their marks; more by ``rule.fade`` a day the
    story has been quiet, as ``quiet`` tells in days), closest first; none when the
    closest member's title names another version, or another story is as close."""
    found: Closest | None = None
    for cluster, (cos, member) in near.best.items():
        theirs = near.window.marks.get(member, NO_MARKS)
        if marks.conflict(theirs):
            continue
        closeness = near.closeness(cluster, rule.linkage)
        need = (rule.agreed if marks.agree(theirs) else rule.join) \
            + rule.fade * quiet(cluster)
        if closeness >= need and (found is None or closeness > found.closeness):
            found = Closest(member, cluster, cos, closeness)
    if found is not None and near.contested(found.cluster_id, rule):
        return None
    return found
