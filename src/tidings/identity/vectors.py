"""The window's meanings as rows of one matrix, and each story's sum of them.

An item's cosine to every recent item is one product with the matrix; a batch's
items get theirs in one matrix-matrix product (``prepare``), which a core runs
several times faster than as many matrix-vector ones, and only the rows that
changed since (the batch's own items, rows reused) are computed again per item.
A story's closeness and two stories' likeness come from running sums of their
members' vectors, so a story of a thousand reports costs what a story of two
does. Rows of expired items are reused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tidings.identity.meaning import DIMENSIONS, Marks

if TYPE_CHECKING:
    import numpy as np

__all__ = ["NEAREST", "VectorWindow"]

#: how many of the window's closest items an item is compared with, story by story
NEAREST = 32


class VectorWindow:
    """The window's vectors by item id, and per cluster the sum of its members'."""

    def __init__(self, capacity: int = 1024) -> None:
        import numpy as np

        self._rows = np.zeros((capacity, DIMENSIONS), dtype=np.float32)
        self._ids = np.full(capacity, -1, dtype=np.int64)
        self._stamp = np.zeros(capacity, dtype=np.int64)  # moved on each change of a row
        self._clock = 0
        self._row_of: dict[int, int] = {}
        self._free: list[int] = []
        self._used = 0  # rows ever used (the high-water mark)
        self.marks: dict[int, Marks] = {}
        self._group_of: dict[int, int] = {}
        self._sums: dict[int, np.ndarray] = {}
        self._sizes: dict[int, int] = {}
        self._batch: dict[int, int] = {}  # item id -> its row of _batch_scores
        self._batch_scores: np.ndarray | None = None
        self._batch_stamps: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self._row_of)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._row_of

    def _grow(self) -> None:
        import numpy as np

        grow = len(self._ids)
        self._rows = np.concatenate([self._rows, np.zeros((grow, DIMENSIONS), np.float32)])
        self._ids = np.concatenate([self._ids, np.full(grow, -1, dtype=np.int64)])
        self._stamp = np.concatenate([self._stamp, np.zeros(grow, dtype=np.int64)])

    def add(self, item_id: int, vector: np.ndarray, marks: Marks, cluster: int) -> None:
        if item_id in self._row_of:
            self.move(item_id, cluster)
            return
        if self._free:
            row = self._free.pop()
        else:
            if self._used == len(self._ids):
                self._grow()
            row = self._used
            self._used += 1
        self._rows[row] = vector
        self._ids[row] = item_id
        self._clock += 1
        self._stamp[row] = self._clock
        self._row_of[item_id] = row
        self.marks[item_id] = marks
        self._enter(item_id, cluster)

    def remove(self, item_id: int) -> None:
        if item_id not in self._row_of:
            return
        self._leave(item_id)
        row = self._row_of.pop(item_id)
        self._rows[row] = 0.0
        self._ids[row] = -1
        self._clock += 1
        self._stamp[row] = self._clock
        self._free.append(row)
        self.marks.pop(item_id, None)

    def move(self, item_id: int, cluster: int) -> None:
        """The item now belongs to ``cluster`` (a hand edit, a warm start's relabel)."""
        if item_id in self._row_of and self._group_of.get(item_id) != cluster:
            self._leave(item_id)
            self._enter(item_id, cluster)

    def _enter(self, item_id: int, cluster: int) -> None:
        vector = self._rows[self._row_of[item_id]]
        self._group_of[item_id] = cluster
        total = self._sums.get(cluster)
        self._sums[cluster] = vector.copy() if total is None else total + vector
        self._sizes[cluster] = self._sizes.get(cluster, 0) + 1

    def _leave(self, item_id: int) -> None:
        cluster = self._group_of.pop(item_id, None)
        if cluster is None:
            return
        left = self._sizes[cluster] - 1
        if left <= 0:
            del self._sums[cluster], self._sizes[cluster]
        else:
            self._sums[cluster] = self._sums[cluster] - self._rows[self._row_of[item_id]]
            self._sizes[cluster] = left

    def prepare(self, batch: Sequence[tuple[int, np.ndarray]]) -> None:
        """The cosines of a batch's items to every row, in one product."""
        import numpy as np

        if not batch:
            return
        matrix = np.vstack([v for _, v in batch]).astype(np.float32, copy=False)
        self._batch_scores = matrix @ self._rows[:self._used].T
        self._batch_stamps = self._stamp[:self._used].copy()
        self._batch = {item_id: i for i, (item_id, _) in enumerate(batch)}

    def scores(self, vector: np.ndarray, item_id: int | None = None) -> np.ndarray:
        """The cosine of ``vector`` to every row (0 for free rows): from the prepared
        batch when ``item_id`` is in it, rows changed since computed again."""
        import numpy as np

        i = self._batch.get(item_id) if item_id is not None else None
        if i is None or self._batch_scores is None or self._batch_stamps is None:
            out: np.ndarray = self._rows[:self._used] @ vector
            return out
        done = len(self._batch_stamps)
        scores = np.empty(self._used, dtype=np.float32)
        scores[:done] = self._batch_scores[i]
        changed = np.nonzero(self._stamp[:done] != self._batch_stamps)[0]
        if len(changed):
            scores[changed] = self._rows[changed] @ vector
        if self._used > done:
            scores[done:] = self._rows[done:self._used] @ vector
        return scores

    def above(self, scores: np.ndarray, floor: float, limit: int = NEAREST
              ) -> list[tuple[int, float]]:
        """(item id, cosine) of the items held whose cosine reaches ``floor``, the
        ``limit`` closest at most (a window of look-alikes costs no more)."""
        import numpy as np

        rows = np.nonzero(scores >= floor)[0]
        if len(rows) > limit:
            rows = rows[np.argpartition(scores[rows], -limit)[-limit:]]
        return [(int(self._ids[r]), float(scores[r])) for r in rows if self._ids[r] >= 0]

    def cosine(self, scores: np.ndarray, item_id: int) -> float | None:
        row = self._row_of.get(item_id)
        return None if row is None or row >= len(scores) else float(scores[row])

    def closeness(self, vector: np.ndarray, cluster: int, linkage: str = "centroid") -> float:
        """``vector``'s closeness to a story: the cosine with its members' mean vector
        ("centroid"), or the mean of its cosines with them ("mean"); 0 for none held."""
        import numpy as np

        total = self._sums.get(cluster)
        if total is None:
            return 0.0
        dot = float(total @ vector)
        if linkage == "mean":
            return dot / self._sizes[cluster]
        return dot / max(float(np.linalg.norm(total)), 1e-9)

    def between(self, a: int, b: int) -> float:
        """The cosine of two stories' mean vectors (how alike they are)."""
        import numpy as np

        sa, sb = self._sums.get(a), self._sums.get(b)
        if sa is None or sb is None:
            return 0.0
        return float(sa @ sb) / max(float(np.linalg.norm(sa) * np.linalg.norm(sb)), 1e-9)
