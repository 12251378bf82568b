"""The online story index: which recent item is a new item's twin (R-DEDUP-12).

Items of the last ``WINDOW`` (72 h) are kept in a MinHash LSH index (datasketch):
a new item's signature finds, in a few dictionary look-ups, the items likely to
share enough shingles with it; each candidate is then checked exactly on its
shingle set, and the item joins the cluster of its most similar candidate at or
above ``JOIN_THRESHOLD``, else it starts a cluster of its own. Why MinHash rather
than SimHash, and where the thresholds come from: docs/clustering.md.

Shingles every recent item of one source carries (its template: a byline, a
"more from" sentence) are dropped for that source before anything is compared,
and two items of one source never join because of each other: a site does not
report its own story twice, but it does repeat its own furniture.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from tidings.identity.closeness import DEFAULT_RULE, MeaningRule, Neighbours, closest_story
from tidings.identity.meaning import NO_MARKS, Marks
from tidings.identity.shingles import MIN_SHINGLES, Shingles, shingle_hash
from tidings.identity.templates import Template, forget, unlist
from tidings.identity.urls import normalize_url
from tidings.identity.vectors import VectorWindow

if TYPE_CHECKING:
    import numpy as np

__all__ = ["JOIN_THRESHOLD", "NUM_PERM", "WINDOW_US", "Candidate", "MeaningRule", "Placement",
           "StoryIndex", "StoryItem", "item_of", "link_hash", "similarity"]

#: an item joins a cluster whose member shares at least this share of shingles (Jaccard)
JOIN_THRESHOLD = 0.25
#: MinHash permutations, cut into LSH bands of ROWS rows: a pair of Jaccard s is a
#: candidate with probability 1 - (1 - s**ROWS)**BANDS (docs/clustering.md, "Speed")
BANDS = 24
ROWS = 2
NUM_PERM = BANDS * ROWS
#: two items sharing fewer shingles than this are not similar, whatever their sizes
MIN_SHARED = 3
#: a bilingual item's Latin-script words found in a Latin-script item count at this
#: weight of their share (see _translated), when at least CROSS_MIN are shared
CROSS_WEIGHT = 0.3
CROSS_MIN = 4
#: titles shorter than this (in shingles) are not compared alone
TITLE_MIN = 4
#: a title-only match counts this much of its Jaccard (identical titles: 0.6)
TITLE_WEIGHT = 0.6
HOUR_US = 3_600_000_000
WINDOW_US = 72 * HOUR_US
#: a shingle in more than this share of the window's items (and in more than
#: COMMON_FLOOR of them) is the window's common vocabulary, not a story's
COMMON_SHARE = 0.01
COMMON_FLOOR = 30


@dataclass(frozen=True, slots=True)
class StoryItem:
    """What the index knows of an item: its source, time (µs) and shingle hashes."""

    item_id: int
    source_id: str
    at: int
    hashes: frozenset[int]
    title: frozenset[int] = frozenset()  # the hashes of title shingles (a subset)
    exact: int = 0  # a hash of the whole title + lead, when there is enough of it (else 0)
    latin: frozenset[int] = frozenset()  # of a bilingual item, its Latin-script shingles
    link: int = 0  # a hash of the page it links to (see link_hash), 0 when none
    #: its title and lead's meaning (a unit vector; None: compared by shingles alone)
    vector: np.ndarray | None = field(default=None, compare=False)
    marks: Marks = NO_MARKS  # the names, figures and versions a translation keeps


def link_hash(url: str | None) -> int:
    """A hash of the page an item links to, tracking parameters out; 0 for none or a
    site's front page. Two sources listing the same page (a wire story under each
    site's own tracking parameters and its own teaser) tell one story, whatever
    their words; a front page is no story."""
    if not url:
        return 0
    norm = normalize_url(url)
    parts = norm.split("/", 3)
    if len(parts) < 4 or not parts[0].startswith("http") or parts[3] in ("", "index.html"):
        return 0
    return shingle_hash(norm) or 1


def item_of(item_id: int, source_id: str, at_us: int, sh: Shingles,
            url: str | None = None, vector: np.ndarray | None = None,
            marks: Marks = NO_MARKS) -> StoryItem:
    """The index's view of an item: its shingles hashed, the page it links to, and
    its meaning when it has been embedded."""
    def hashed(values: frozenset[str]) -> frozenset[int]:
        return frozenset(map(shingle_hash, values))

    return StoryItem(item_id, source_id, at_us, hashed(sh.all), hashed(sh.title), sh.exact,
                     hashed(sh.latin), link_hash(url), vector, marks)


@dataclass(frozen=True, slots=True)
class Candidate:
    item_id: int
    cluster_id: int
    similarity: float  # of the shingles, or the meaning's closeness to the story
    meaning: float = 0.0  # the cosine with ``item_id`` (0 when either has no vector)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where an item went: ``matched`` is the member it is most similar to (None for the
    first item of a cluster); ``item`` is what was indexed (its shingles after template
    and common-vocabulary removal)."""

    item_id: int
    cluster_id: int
    similarity: float
    matched: int | None
    item: StoryItem
    meaning: float = 0.0  # the cosine with ``matched`` (0 when either has no vector)


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    """Jaccard similarity of two shingle sets; 0 when they share fewer than
    ``MIN_SHARED`` shingles (two short sets sharing a word are no evidence)."""
    if not a or not b:
        return 0.0
    common = len(a & b)
    return common / (len(a) + len(b) - common) if common >= MIN_SHARED else 0.0


def _views(hashes: frozenset[int], latin: frozenset[int]) -> list[frozenset[int]]:
    """A bilingual item is compared whole and per script (its Latin-script and its CJK
    shingles apart): a Chinese report quoting the English wire shares the wire's words
    without its Chinese half diluting them."""
    return [hashes, latin, hashes - latin] if latin else [hashes]


def _translated(latin: frozenset[int], other: frozenset[int]) -> float:
    """How far a bilingual item's Latin-script words (names, products, figures: what
    survives a translation) are all in a Latin-script item: their share, at
    ``CROSS_WEIGHT``, when ``CROSS_MIN`` or more are shared. A Chinese report of an
    English story keeps the story's names while its Chinese words dilute any Jaccard."""
    common = len(latin & other)
    return CROSS_WEIGHT * common / len(latin) if common >= CROSS_MIN else 0.0


def similarity(a: frozenset[int], b: frozenset[int], title_a: frozenset[int] = frozenset(),
               title_b: frozenset[int] = frozenset(), latin_a: frozenset[int] = frozenset(),
               latin_b: frozenset[int] = frozenset()) -> float:
    """Jaccard of title and lead together (per script too, for bilingual items), or of
    the titles alone when both titles have ``TITLE_MIN`` shingles or more: copies of one
    story share the headline while their leads may be each site's own teaser."""
    if latin_a or latin_b:
        score = max(jaccard(x, y) for x in _views(a, latin_a) for y in _views(b, latin_b))
        if not (latin_a and latin_b):
            score = max(score, _translated(latin_a or latin_b, b if latin_a else a))
    else:
        score = jaccard(a, b)
    if len(title_a) >= TITLE_MIN and len(title_b) >= TITLE_MIN:
        score = max(score, jaccard(title_a, title_b) * TITLE_WEIGHT)
    return score


@dataclass(slots=True)
class _Entry:
    cluster_id: int
    source_id: str
    at: int
    hashes: frozenset[int]
    title: frozenset[int]
    counted: frozenset[int]  # what it added to the window's shingle counts
    exact: int
    latin: frozenset[int]
    link: int


class StoryIndex:
    """Recent items by signature; see the module docstring."""

    def __init__(self, *, threshold: float = JOIN_THRESHOLD, window_us: int = WINDOW_US,
                 num_perm: int = NUM_PERM, bands: int = BANDS, rows: int = ROWS,
                 meaning: MeaningRule | None = DEFAULT_RULE) -> None:
        # numpy, scipy and datasketch (~70 MiB) load with the first index, not with every
        # process that imports tidings: a crawl or a CLI command never clusters
        from tidings.identity.bands import BandIndex, Signer

        self.threshold = threshold
        self.window_us = window_us
        self.num_perm = num_perm
        self._signer = Signer(num_perm)
        self._lsh = BandIndex(min(bands, num_perm // rows), rows)
        self._entries: dict[int, _Entry] = {}
        self._titles: dict[frozenset[int], set[int]] = {}
        self._exact: dict[int, set[int]] = {}
        self._links: dict[int, set[int]] = {}
        self._expiry: list[tuple[int, int]] = []  # (at, item id), a min-heap
        self._templates: dict[str, Template] = {}
        self._df: Counter[int] = Counter()  # in how many indexed items each shingle is
        self._signatures: dict[int, tuple[frozenset[int], np.ndarray]] = {}
        self._newest = 0
        #: items with a vector are compared by meaning too (None: by shingles alone)
        self.meaning = meaning
        self._vectors = VectorWindow()
        #: cluster id -> (how many of its items the window holds, the latest one's time)
        self._clusters: dict[int, tuple[int, int]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._entries

    def cluster_of(self, item_id: int) -> int | None:
        entry = self._entries.get(item_id)
        return entry.cluster_id if entry else None

    def learn(self, items: Iterable[StoryItem]) -> None:
        """Learn the sources' templates from a batch before placing it, so a source's
        first items are judged without their furniture too; and compute the batch's
        cosines to the window in one product."""
        batch = list(items)
        self._learn(batch)
        if self.meaning is not None:
            self._vectors.prepare([(x.item_id, x.vector) for x in batch if x.vector is not None])

    def _learn(self, items: Iterable[StoryItem]) -> None:
        for item in items:
            template = self._templates.get(item.source_id)
            if template is None:
                template = self._templates[item.source_id] = Template()
            template.learn(item.item_id, item.hashes)

    # ---------------------------------------------------------------- placing
    def place(self, item: StoryItem, *, apart: Collection[int] = (),
              together: Collection[int] = ()) -> Placement:
        """Put ``item`` in the best cluster or a new one (its own id), and remember it.

        ``apart``: items it was split from by hand (it never joins their clusters);
        ``together``: items it was merged with by hand (it joins the first of them that
        is in the index, whatever the similarity).
        """
        self.expire(item.at)
        self._learn([item])
        own = self.effective(item)
        best = self._forced(together, own) or self._best(own, apart)
        if best is None:
            placement = Placement(item.item_id, item.item_id, 0.0, None, own)
        else:
            placement = Placement(item.item_id, best.cluster_id, best.similarity, best.item_id,
                                  own, best.meaning)
        self.add(own, placement.cluster_id)
        return placement

    def _best(self, item: StoryItem, apart: Collection[int]) -> Candidate | None:
        """Where the item goes (docs/clustering.md, "Meaning"): a verbatim copy or the
        same page at once; else the shingles' best candidate when its story is as close
        in meaning, no other story is closer or as close, and neither is a roundup or
        names another version or figure; else the story meaning puts it in. Items
        without a vector (placed before meanings were stored) are judged by shingles."""
        blocked = {self._entries[i].cluster_id for i in apart if i in self._entries}
        rule = self.meaning
        near = self._neighbours(item, blocked)
        words = [c for c in self.candidates(item) if c.cluster_id not in blocked]
        if near is None or rule is None:
            return words[0] if words else None

        def quiet(cluster: int) -> float:  # days since the story's latest report
            latest = self._clusters.get(cluster, (0, item.at))[1]
            return max(0, item.at - latest) / (24 * HOUR_US)

        found = None if item.marks.digest else closest_story(near, item.marks, rule, quiet)
        for cand in words:
            cos = near.window.cosine(near.scores, cand.item_id)
            if cos is None or cand.similarity >= 1.0:
                return replace(cand, meaning=cos or 0.0)
            theirs = self._vectors.marks.get(cand.item_id, NO_MARKS)
            close = near.closeness(cand.cluster_id, rule.linkage)
            if close >= rule.veto + rule.fade * quiet(cand.cluster_id) \
                    and not item.marks.digest and not theirs.digest \
                    and not item.marks.conflict(theirs) \
                    and not near.contested(cand.cluster_id, rule) \
                    and (found is None or found.cluster_id == cand.cluster_id
                         or found.closeness <= close):
                return replace(cand, meaning=cos)
        return Candidate(found.item_id, found.cluster_id, found.closeness, found.cosine) \
            if found else None

    def _neighbours(self, item: StoryItem, blocked: set[int]) -> Neighbours | None:
        """The item's cosines to the window's stories it may join (None without a
        vector)."""
        if item.vector is None or self.meaning is None:
            return None

        def cluster_of(other: int) -> int | None:
            entry = self._entries.get(other)
            if entry is None or other == item.item_id or entry.source_id == item.source_id \
                    or abs(entry.at - item.at) > self.window_us \
                    or entry.cluster_id in blocked \
                    or self._vectors.marks.get(other, NO_MARKS).digest:
                return None  # (a roundup is no story's member to join)
            return entry.cluster_id

        return Neighbours.of(self._vectors, item.vector,
                             self._vectors.scores(item.vector, item.item_id),
                             min(self.meaning.agreed, self.meaning.veto), cluster_of)

    def candidates(self, item: StoryItem) -> list[Candidate]:
        """Every indexed item of another source (or listing the same page), within the
        window, whose similarity reaches the threshold, most similar first. ``item`` as
        :meth:`effective` gives it."""
        if not item.hashes and not item.title and not item.exact and not item.link:
            return []
        keys: set[int] = set()
        for view in _views(item.hashes, item.latin) if item.hashes else []:
            keys.update(abs(k) for k in self._lsh.query(self._minhash(view)))
        keys.update(self._titles.get(item.title, ()))
        twins = self._exact.get(item.exact, set()) if item.exact else set()
        # one page listed twice by its source is one story too (each other's copy)
        pages = self._links.get(item.link, set()) if item.link else set()
        twins = twins | pages
        keys.update(twins)
        found = []
        for key in keys:
            entry = self._entries.get(key)
            if entry is None or key == item.item_id:
                continue
            if entry.source_id == item.source_id and key not in pages:
                continue
            if abs(entry.at - item.at) > self.window_us:
                continue
            score = 1.0 if key in twins else similarity(
                item.hashes, entry.hashes, item.title, entry.title, item.latin, entry.latin)
            if score >= self.threshold:
                found.append(Candidate(key, entry.cluster_id, score))
        found.sort(key=lambda c: (-c.similarity, c.item_id))
        return found

    def _forced(self, together: Collection[int], item: StoryItem) -> Candidate | None:
        for other in sorted(together):
            entry = self._entries.get(other)
            if entry is not None:
                score = similarity(item.hashes, entry.hashes, item.title, entry.title,
                                   item.latin, entry.latin)
                return Candidate(other, entry.cluster_id, score)
        return None

    def effective(self, item: StoryItem) -> StoryItem:
        """``item`` less its source's template; no shingles at all when too few are left
        to tell one story from another."""
        common = self._templates[item.source_id].common() \
            if item.source_id in self._templates else frozenset()
        plain = item.hashes - common
        title = item.title - common
        limit = max(COMMON_FLOOR, int(COMMON_SHARE * len(self._entries)))
        df = self._df
        hashes = frozenset(h for h in plain if df.get(h, 0) <= limit)
        if len(title) < TITLE_MIN:
            title = frozenset()
        if len(hashes) < MIN_SHINGLES:  # too little left to compare; the title may do
            return replace(item, hashes=frozenset(), title=title, latin=frozenset())
        latin = item.latin & hashes
        if min(len(latin), len(hashes) - len(latin)) < MIN_SHINGLES:
            latin = frozenset()
        return replace(item, hashes=hashes, title=title, latin=latin)

    # ----------------------------------------------------------- maintenance
    def add(self, item: StoryItem, cluster_id: int) -> None:
        """Index an item already placed (a warm start from storage, or :meth:`place`);
        its hashes as :meth:`effective` gave them."""
        entry = self._entries.get(item.item_id)
        if entry is not None:
            self.relabel([item.item_id], cluster_id)
            return
        counted = item.hashes | item.title
        self._entries[item.item_id] = _Entry(cluster_id, item.source_id, item.at, item.hashes,
                                             item.title, counted, item.exact, item.latin,
                                             item.link)
        if item.exact:
            self._exact.setdefault(item.exact, set()).add(item.item_id)
        if item.link:
            self._links.setdefault(item.link, set()).add(item.item_id)
        self._df.update(counted)
        heapq.heappush(self._expiry, (item.at, item.item_id))
        self._newest = max(self._newest, item.at)
        if item.hashes:
            self._lsh.insert(item.item_id, self._minhash(item.hashes))
        if item.latin:  # a bilingual item is found by its Latin-script half alone too
            self._lsh.insert(-item.item_id, self._minhash(item.latin))
        if len(item.title) >= TITLE_MIN:
            self._titles.setdefault(item.title, set()).add(item.item_id)
        self._member(cluster_id, item.at)
        if item.vector is not None:
            self._vectors.add(item.item_id, item.vector, item.marks, cluster_id)

    def relabel(self, items: Iterable[int], cluster_id: int) -> None:
        """Hand-made merges and splits move indexed items to another cluster."""
        for item_id in items:
            entry = self._entries.get(item_id)
            if entry is not None and entry.cluster_id != cluster_id:
                self._unmember(entry.cluster_id)
                entry.cluster_id = cluster_id
                self._member(cluster_id, entry.at)
                self._vectors.move(item_id, cluster_id)

    def _member(self, cluster_id: int, at: int) -> None:
        size, latest = self._clusters.get(cluster_id, (0, at))
        self._clusters[cluster_id] = (size + 1, max(latest, at))

    def _unmember(self, cluster_id: int) -> None:
        size, latest = self._clusters.get(cluster_id, (1, 0))
        if size <= 1:
            self._clusters.pop(cluster_id, None)
        else:
            self._clusters[cluster_id] = (size - 1, latest)

    def expire(self, now_us: int) -> int:
        """Forget items older than the window before the newest item seen (or ``now_us``)."""
        self._newest = max(self._newest, now_us)
        horizon = self._newest - self.window_us
        gone = 0
        while self._expiry and self._expiry[0][0] < horizon:
            _, item_id = heapq.heappop(self._expiry)
            entry = self._entries.pop(item_id, None)
            if entry is None:
                continue
            if entry.hashes:
                self._lsh.remove(item_id)
            if entry.latin:
                self._lsh.remove(-item_id)
            forget(self._df, entry.counted)
            self._unmember(entry.cluster_id)
            self._vectors.remove(item_id)
            unlist(self._exact, entry.exact, item_id)
            unlist(self._links, entry.link, item_id)
            same = self._titles.get(entry.title)
            if same is not None:
                same.discard(item_id)
                if not same:
                    del self._titles[entry.title]
            gone += 1
        return gone

    def _minhash(self, hashes: frozenset[int]) -> np.ndarray:
        """The signature of a set; the last few are kept, since placing an item queries
        with the same sets it then inserts."""
        cached = self._signatures.get(id(hashes))
        if cached is not None and cached[0] is hashes:
            return cached[1]
        m = self._signer.signature(hashes)
        if len(self._signatures) >= 8:
            self._signatures.clear()
        self._signatures[id(hashes)] = (hashes, m)
        return m
