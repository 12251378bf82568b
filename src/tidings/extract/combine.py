"""Choosing among extractor outputs, and mapping text back to blocks.

Each extractor fails differently: trafilatura in recall mode keeps boilerplate
now and then, in precision mode it drops real paragraphs, and the density scorer
sees whole multi-part articles but also the odd caption or byline. The two
trafilatura modes share most of their code, so they tend to fail together; a
plain majority vote would let them outvote the density scorer exactly where
it is right. Hence :func:`arbitrate`: the density output judges between the two
modes, and then replaces the winner only on strong, structural evidence (see
its docstring). Agreement is F1 over 4-word shingles throughout.
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
    return frozenset(zip(*(tokens[i:] for i in range(SHINGLE)), strict=False))


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


# The density output extends trafilatura's when it holds (nearly) all of it and
# adds at least this many long paragraphs, half as much text again, the long
# paragraphs making up most of the addition: an article in several parts,
# of which trafilatura kept the first.
_EXTEND_MIN_PARAGRAPHS = 3
_LONG_PARAGRAPH = 200
_EXTEND_MIN_GROWTH = 1.5
_EXTEND_LONG_SHARE = 0.8
_CONTAINED = 0.95
# The density output replaces trafilatura's when it is a slightly smaller
# subset of it: what trafilatura kept on top is what the scorer rejected.
_SUBSET_CONTAINED = 0.97
_SUBSET_MIN_SIZE = 0.85
# Edge lines of trafilatura's text that the density output lacks are dropped
# while they make up at most this share of it.
_TRIM_MAX_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class Arbitration:
    """The text chosen and the extractor it came from."""

    method: str
    text: str
    extended: bool = False  # density paragraphs added to trafilatura's text


def _covered(part: frozenset[tuple[str, ...]], whole: frozenset[tuple[str, ...]]) -> float:
    return len(part & whole) / len(part) if part else 0.0


def arbitrate(recall: Candidate, precision: Candidate, density: Candidate) -> Arbitration | None:
    """The body text, from trafilatura's two modes and the density scorer.

    1. Between recall and precision mode, the one that agrees more with the
       density output wins (ties and an empty precision output go to recall).
    2. The density output replaces the winner when it is a subset of it, not
       much smaller: the difference is boilerplate the scorer rejected.
    3. It extends the winner when it holds all of it plus several long
       paragraphs (a multi-part article): the text is then the density blocks
       the winner supports, plus the long ones.
    4. Otherwise the winner stands, minus edge lines the density output lacks
       (:func:`_trim_edges`).
    """
    sets = {c.method: shingles(c.text) for c in (recall, precision, density)}
    r, p, d = sets[recall.method], sets[precision.method], sets[density.method]
    if not r and not p:
        return Arbitration(density.method, density.text) if d else None
    best, t = (precision, p) if not r or agreement(p, d) > agreement(r, d) else (recall, r)
    if not d:
        return Arbitration(best.method, best.text)
    smaller = _SUBSET_MIN_SIZE * len(t) <= len(d) < len(t)
    if smaller and _covered(d, t) >= _SUBSET_CONTAINED:
        return Arbitration(density.method, density.text)
    if _covered(t, d) >= _CONTAINED and len(d) >= _EXTEND_MIN_GROWTH * len(t):
        merged = _extension(density.text.split("\n"), t)
        if merged is not None:
            return Arbitration(density.method, merged, extended=True)
    return Arbitration(best.method, _trim_edges(best.text, t, d))


def _trim_edges(
    text: str, own: frozenset[tuple[str, ...]], judge: frozenset[tuple[str, ...]]
) -> str:
    """``text`` without leading and trailing lines that ``judge`` does not hold.

    Datelines, bylines and "about the company" blurbs sit at the edges of what
    trafilatura returns; when the density scorer left them out, they go, as
    long as that removes no more than a small part of the text (a scorer that
    found only half the article must not cut the other half).
    """
    lines = text.split("\n")
    start, end = 0, len(lines)
    while start < end and not _line_held(lines[start], judge):
        start += 1
    while end > start and not _line_held(lines[end - 1], judge):
        end -= 1
    if start == 0 and end == len(lines):
        return text
    trimmed = "\n".join(lines[start:end])
    if len(shingles(trimmed)) < (1 - _TRIM_MAX_SHARE) * len(own):
        return text
    return trimmed


def _line_held(line: str, judge: frozenset[tuple[str, ...]]) -> bool:
    own = shingles(line)
    return not own or _covered(own, judge) >= 0.5


def _extension(parts: Sequence[str], base: frozenset[tuple[str, ...]]) -> str | None:
    """``parts`` supported by ``base`` plus the long ones, if those make a real addition."""
    kept: list[str] = []
    added, long_added, long_count = 0, 0, 0
    for part in parts:
        own = shingles(part)
        if not own:
            continue
        is_long = len(part) >= _LONG_PARAGRAPH
        if _covered(own, base) >= 0.5:
            kept.append(part)
            continue
        added += len(own)
        if is_long:
            long_added += len(own)
            long_count += 1
            kept.append(part)
    if long_count < _EXTEND_MIN_PARAGRAPHS or long_added < _EXTEND_LONG_SHARE * added:
        return None
    return "\n".join(kept)


def supported_blocks(blocks: Sequence[Block], text: str, threshold: float = 0.5) -> list[Block]:
    """The blocks whose shingles mostly occur in ``text`` (in document order)."""
    target = shingles(text)
    kept = []
    for block in blocks:
        own = shingles(block.text)
        if own and len(own & target) >= threshold * len(own):
            kept.append(block)
    return kept
