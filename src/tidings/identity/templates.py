"""What every recent item of one source carries (its template: a byline, a "more
from" sentence), learnt from the source's last items so the story index compares
items without it; and the counting helpers the index shares with it."""

from __future__ import annotations

from array import array
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["TEMPLATE_MEMORY", "TEMPLATE_MIN_ITEMS", "Template", "forget", "unlist"]

#: how many of a source's recent items its template is learnt from
TEMPLATE_MEMORY = 20
TEMPLATE_MIN_ITEMS = 4


def unlist(lookup: dict[int, set[int]], key: int, item_id: int) -> None:
    same = lookup.get(key)
    if same is not None:
        same.discard(item_id)
        if not same:
            del lookup[key]


def forget(counts: Counter[int], hashes: Iterable[int]) -> None:
    """Count each of ``hashes`` once less, dropping what reaches zero (one pass;
    ``Counter.subtract`` and a clean-up pass cost two)."""
    for h in hashes:
        left = counts[h] - 1
        if left > 0:
            counts[h] = left
        else:
            counts.pop(h, None)


@dataclass(slots=True)
class Template:
    """A source's recent shingle sets (as compact arrays: thousands of sources each
    keep their last 20) and how many of them hold each shingle."""

    recent: deque[array[int]] = field(default_factory=deque)
    counts: Counter[int] = field(default_factory=Counter)
    seen: set[int] = field(default_factory=set)
    cached: frozenset[int] | None = None  # what common() gave, until the next learn()

    def learn(self, item_id: int, hashes: frozenset[int]) -> None:
        if item_id in self.seen:
            return
        self.seen.add(item_id)
        self.cached = None
        self.recent.append(array("I", hashes))
        self.counts.update(hashes)
        if len(self.recent) > TEMPLATE_MEMORY:
            forget(self.counts, self.recent.popleft())
        if len(self.seen) > 4 * TEMPLATE_MEMORY:
            self.seen.clear()  # only guards against learning one batch twice

    def common(self) -> frozenset[int]:
        """Shingles in at least half of the source's recent items (and in 3 or more)."""
        if self.cached is None:
            n = len(self.recent)
            floor = max(3, n // 2)
            self.cached = frozenset() if n < TEMPLATE_MIN_ITEMS else \
                frozenset(h for h, c in self.counts.items() if c >= floor)
        return self.cached
