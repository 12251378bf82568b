"""MinHash signatures and their LSH bands, one NumPy pass per set.

datasketch's ``MinHash`` permutations are used as they are; what is done here is
what its ``MinHashLSH`` does band by band in Python (a byte swap, a storage call
and a dictionary look-up per band, which was most of the time of placing an item:
docs/benchmarks.md, "Story clustering"). Here a signature's bands are folded to
one 64-bit key each in a single vectorized step, and all bands share one
dictionary (a key carries its band's number), so a look-up is a few C-level
dictionary hits.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

import numpy as np
from datasketch import MinHash

__all__ = ["BandIndex", "Signer"]

_MERSENNE = np.uint64((1 << 61) - 1)
_MAX_HASH = np.uint64((1 << 32) - 1)
# an odd 64-bit constant mixing a band's rows into one key (golden-ratio multiplier)
_MIX = np.uint64(0x9E3779B97F4A7C15)


class Signer:
    """MinHash signatures over 32-bit shingle hashes (datasketch's permutations,
    its "affine32" scheme), computed for a whole set at once."""

    def __init__(self, num_perm: int) -> None:
        a, b = MinHash(num_perm=num_perm).permutations
        self._a = np.asarray(a, dtype=np.uint64)
        self._b = np.asarray(b, dtype=np.uint64)
        self.num_perm = num_perm

    def signature(self, hashes: Collection[int]) -> np.ndarray:
        """The set's minimum under each permutation (uint64, values below 2**32)."""
        hv = np.fromiter(hashes, dtype=np.uint64, count=len(hashes))
        # uint64 arrays wrap silently on overflow, as datasketch's own arithmetic does
        phv = ((hv[:, None] * self._a + self._b) % _MERSENNE) & _MAX_HASH
        return np.asarray(phv.min(axis=0))


class BandIndex:
    """Which stored keys share a band with a signature (LSH: ``bands`` bands of
    ``rows`` rows each; two sets of Jaccard *s* meet with probability
    1 - (1 - s**rows)**bands)."""

    def __init__(self, bands: int, rows: int) -> None:
        self.bands, self.rows = bands, rows
        self._buckets: dict[int, set[int]] = {}
        self._keys: dict[int, list[int]] = {}
        self._last: tuple[np.ndarray, list[int]] | None = None
        # each band's keys are offset by its own number, so one dictionary holds all
        self._salt = np.arange(bands, dtype=np.uint64) * np.uint64(0x632BE59BD9B4E019)

    def band_keys(self, signature: np.ndarray) -> list[int]:
        """One key per band (the last signature's are kept: placing an item queries
        with the signature it then inserts)."""
        last = self._last
        if last is not None and last[0] is signature:
            return last[1]
        rows = signature[:self.bands * self.rows].reshape(self.bands, self.rows)
        key = rows[:, 0].copy()
        for r in range(1, self.rows):
            key = key * _MIX + rows[:, r]
        key = key ^ self._salt
        keys: list[int] = key.tolist()
        self._last = (signature, keys)
        return keys

    def insert(self, key: int, signature: np.ndarray) -> None:
        keys = self.band_keys(signature)
        self._keys[key] = keys
        buckets = self._buckets
        for band_key in keys:
            bucket = buckets.get(band_key)
            if bucket is None:
                buckets[band_key] = {key}
            else:
                bucket.add(key)

    def query(self, signature: np.ndarray) -> set[int]:
        found: set[int] = set()
        buckets = self._buckets
        for band_key in self.band_keys(signature):
            bucket = buckets.get(band_key)
            if bucket is not None:
                found |= bucket
        return found

    def remove(self, key: int) -> None:
        for band_key in self._keys.pop(key, ()):
            bucket = self._buckets.get(band_key)
            if bucket is not None:
                bucket.discard(key)
                if not bucket:
                    del self._buckets[band_key]

    def __len__(self) -> int:
        return len(self._keys)

    def keys(self) -> Iterable[int]:
        return self._keys.keys()
