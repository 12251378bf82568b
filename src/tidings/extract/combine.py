"""Choosing among extractor outputs by agreement, and mapping text back to blocks.

Each extractor fails differently: trafilatura in recall mode keeps boilerplate
now and then, in precision mode it drops real paragraphs, and the density scorer
sees whole multi-part articles but also the odd teaser list. On a given page the
output the others agree with most (the medoid, by F1 over 4-word shingles) is
rarely the one that failed, so that is the one we keep.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tidings.extract.blocks import Block

_TOKEN = re.compile(r"\w+")
SHINGLE = 4


def shingles(text: str) -> frozenset[tuple[str, ...]]:
    """Word 4-grams of ``text``; a text shorter than that is one shingle."""
    tokens = _TOKEN.findall(text.lower())
    if len(tokens) < SHINGLE:
        return frozenset({tuple(tokens)}) if tokens else frozenset()
    return frozenset(tuple(tokens[i : i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1))


def agreement(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    """F1 of two shingle sets (symmetric; 0 when either is empty)."""
    if not a or not b:
        return 0.0
    common = len(a & b)
    return 2 * common / (len(a) + len(b))


@dataclass(frozen=True, slots=True)
class Candidate:
    method: str
    text: str


def choose(candidates: Sequence[Candidate]) -> Candidate | None:
    """The candidate with the highest summed agreement with the others.

    Empty candidates take no part; with fewer than three left there is no
    majority, and ties in general go to the earlier candidate, so callers list
    them in order of preference.
    """
    present = [c for c in candidates if c.text.strip()]
    if len(present) <= 2:
        return present[0] if present else None
    sets = [shingles(c.text) for c in present]
    best_index, best_score = 0, -1.0
    for i, own in enumerate(sets):
        score = sum(agreement(own, other) for j, other in enumerate(sets) if j != i)
        if score > best_score:
            best_index, best_score = i, score
    return present[best_index]


def supported_blocks(blocks: Sequence[Block], text: str, threshold: float = 0.5) -> list[Block]:
    """The blocks whose shingles mostly occur in ``text`` (in document order)."""
    target = shingles(text)
    kept = []
    for block in blocks:
        own = shingles(block.text)
        if own and len(own & target) >= threshold * len(own):
            kept.append(block)
    return kept
