"""Which story of the window an item's meaning is closest to (R-DEDUP-12).

The window's vectors are rows of one matrix, so an item's cosine to every recent
item is one matrix-vector product (8,000 rows of 512 floats for a 72 h window of a
million-a-year archive: about a millisecond); rows of expired items are reused.

An item is compared with a *story*, not with its single closest member: its
closeness to a story is the mean of its cosines to the story's members (average
linkage). A roundup ("this week in AI") is close to each of its stories' members
in turn; once it has joined one, the next story's items compare with the whole of
that story, not with the roundup alone, so one bridge never chains two stories.
How the thresholds were chosen: docs/clustering.md, "Meaning".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tidings.identity.meaning import DIMENSIONS, NO_MARKS, Marks

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DEFAULT_RULE", "Closest", "MeaningRule", "Neighbours", "VectorWindow", "closest_story"]


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
    #: how an item's closeness to a story is taken from its cosines with the members:
    #: "centroid" (the cosine with their mean vector), "mean" of them, or "max"
    linkage: str = "centroid"
    #: the bar rises by this much a day since the story's latest report: a follow-up a
    #: day later (a speech about yesterday's decision) reads like the news it follows
    fade: float = 0.15
    #: two stories whose members' mean vectors are this alike are one story told apart
    #: (neither contests the other)
    kin: float = 0.45


DEFAULT_RULE = MeaningRule()


class VectorWindow:
    """The window's vectors by item id, as rows of one float32 matrix."""

    def __init__(self, capacity: int = 1024) -> None:
        import numpy as np

        self._rows = np.zeros((capacity, DIMENSIONS), dtype=np.float32)
        self._ids = np.full(capacity, -1, dtype=np.int64)
        self._row_of: dict[int, int] = {}
        self._free: list[int] = []
        self._used = 0  # rows ever used (the high-water mark)
        self.marks: dict[int, Marks] = {}

    def __len__(self) -> int:
        return len(self._row_of)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._row_of

    def add(self, item_id: int, vector: np.ndarray, marks: Marks) -> None:
        import numpy as np

        if item_id in self._row_of:
            return
        if self._free:
            row = self._free.pop()
        else:
            if self._used == len(self._ids):
                grow = len(self._ids)
                self._rows = np.concatenate(
                    [self._rows, np.zeros((grow, DIMENSIONS), dtype=np.float32)])
                self._ids = np.concatenate([self._ids, np.full(grow, -1, dtype=np.int64)])
            row = self._used
            self._used += 1
        self._rows[row] = vector
        self._ids[row] = item_id
        self._row_of[item_id] = row
        self.marks[item_id] = marks

    def remove(self, item_id: int) -> None:
        row = self._row_of.pop(item_id, None)
        if row is None:
            return
        self._rows[row] = 0.0
        self._ids[row] = -1
        self._free.append(row)
        self.marks.pop(item_id, None)

    def vector(self, item_id: int) -> np.ndarray | None:
        row = self._row_of.get(item_id)
        return None if row is None else self._rows[row]

    def scores(self, vector: np.ndarray) -> np.ndarray:
        """The cosine of ``vector`` to every row (0 for free rows)."""
        out: np.ndarray = self._rows[:self._used] @ vector
        return out

    def above(self, scores: np.ndarray, floor: float) -> list[tuple[int, float]]:
        """(item id, cosine) of the items held whose cosine reaches ``floor``."""
        import numpy as np

        rows = np.nonzero(scores >= floor)[0]
        return [(int(self._ids[r]), float(scores[r])) for r in rows if self._ids[r] >= 0]

    def cosine(self, scores: np.ndarray, item_id: int) -> float | None:
        row = self._row_of.get(item_id)
        return None if row is None or row >= len(scores) else float(scores[row])

    def closeness(self, scores: np.ndarray, members: Iterable[int], linkage: str = "mean"
                  ) -> float:
        """Mean cosine to the members held (0 when none is)."""
        values = [c for c in (self.cosine(scores, m) for m in members) if c is not None]
        if not values:
            return 0.0
        if linkage == "max":
            return max(values)
        mean = sum(values) / len(values)
        if linkage == "centroid":
            return mean / max(self._spread(members), 1e-6)
        return mean

    def _spread(self, members: Iterable[int]) -> float:
        """The length of the members' mean vector (1 for one member, less the more
        they differ)."""
        import numpy as np

        rows = [self._row_of[m] for m in members if m in self._row_of]
        return float(np.linalg.norm(self._rows[rows].mean(axis=0))) if rows else 1.0

    def between(self, a: Iterable[int], b: Iterable[int]) -> float:
        """The cosine of two groups' mean vectors (how alike two stories are)."""
        import numpy as np

        ra = [self._row_of[m] for m in a if m in self._row_of]
        rb = [self._row_of[m] for m in b if m in self._row_of]
        if not ra or not rb:
            return 0.0
        ca, cb = self._rows[ra].mean(axis=0), self._rows[rb].mean(axis=0)
        return float(ca @ cb / max(float(np.linalg.norm(ca) * np.linalg.norm(cb)), 1e-9))


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
    cosine with a member, that member), and how to read a story's members."""

    window: VectorWindow
    scores: np.ndarray
    best: dict[int, tuple[float, int]]
    members: Callable[[int], Iterable[int]]

    @classmethod
    def of(cls, window: VectorWindow, scores: np.ndarray, floor: float,
           cluster_of: Callable[[int], int | None],
           members: Callable[[int], Iterable[int]]) -> Neighbours:
        """``cluster_of`` gives the cluster of a window item the item may join (None
        for one of its own source, out of its time window or split from it by hand)."""
        best: dict[int, tuple[float, int]] = {}
        for item_id, cos in window.above(scores, floor):
            cluster = cluster_of(item_id)
            if cluster is not None and cos > best.get(cluster, (-1.0, 0))[0]:
                best[cluster] = (cos, item_id)
        return cls(window, scores, best, members)

    def closeness(self, cluster: int, linkage: str = "mean") -> float:
        return self.window.closeness(self.scores, self.members(cluster), linkage)

    def contested(self, cluster: int, rule: MeaningRule) -> bool:
        """Another story is about as close (within ``rule.margin`` of this one's best
        cosine) and is not this one told apart: a roundup, or a report that mentions
        the news it follows, belongs to neither."""
        mine = self.best.get(cluster, (0.0, 0))[0]
        for other, (cos, _) in self.best.items():
            if other != cluster and cos >= mine - rule.margin \
                    and self.window.between(self.members(cluster),
                                            self.members(other)) < rule.kin:
                return True
        return False


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
