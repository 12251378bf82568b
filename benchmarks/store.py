"""Storage benchmark: a synthetic archive (half Chinese, half English, ~2 KB bodies).

    .venv/bin/python benchmarks/store.py --dir /tmp/bench           # 1,000,000 items
    .venv/bin/python benchmarks/store.py --items 100000             # quicker

Items arrive as the pipeline writes them: one ``apply_upserts`` per feed listing
(``--batch`` new items of one source, keys under that site's URL prefix), with
``index_pending(2000)`` after every 2,000 new items, as the scheduler does.
Rates are medians over windows of ``--window`` items (the last window is the
rate near the full archive size). Re-listings are what the pipeline asks of
storage for a listing it has seen before: ``lookup_listing`` of the listing's
keys (an unchanged owner listing writes nothing); rediscoveries
add the discovery write of another source. Also printed: the search index size
against the indexed text, query latencies (1/2/3/6-character Chinese and
English; newest first and ranked, snippets included), the reprint look-up of a
50-item timeline page (``fingerprint_groups``) and, from the same run,
a plain SQLite executemany of the same rows into an unindexed table, and
"FTS5 alone": the same documents, tokenized in advance, straight into the
search table (the ceiling of index build).
``--dir`` keeps the database: a second run with a larger ``--items`` resumes.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import re
import sqlite3
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tidings.model import BodyState, ItemState, Source, SourceKind
from tidings.store.base import (
    Discovery,
    ItemFields,
    ItemQuery,
    NewItem,
    SearchQuery,
    UpsertBatch,
)
from tidings.store.sqlite import SqliteStorage
from tidings.store.textindex import document, html_to_text

FEEDS = Path(__file__).resolve().parents[2] / "shared" / "eval" / "feeds"
INDEX_BATCH = 2000
START = datetime(2023, 1, 1, tzinfo=UTC)
TARGETS = {"new": 20_000, "unchanged": 50_000, "index": 5_000}


# ------------------------------------------------------------------ synthetic text

class Corpus:
    """Zipf-distributed Chinese words and English words (from the eval feeds)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        chars = [chr(c) for c in range(0x4E00, 0x4E00 + 3500)]
        rng.shuffle(chars)
        char_w = list(itertools.accumulate(1 / (r + 1) for r in range(len(chars))))
        self.cjk_words = list(dict.fromkeys(
            "".join(rng.choices(chars, cum_weights=char_w, k=rng.choice((1, 2, 2, 2, 3, 4))))
            for _ in range(40_000)))
        self.cjk_w = list(itertools.accumulate(
            1 / (r + 1) ** 0.9 for r in range(len(self.cjk_words))))
        self.chars = chars
        self.en_words, self.en_w = _english_words()
        self.paragraphs_zh = [self._zh_paragraph() for _ in range(20_000)]
        self.paragraphs_en = [self._en_paragraph() for _ in range(20_000)]

    def _zh_paragraph(self) -> str:
        words = self.rng.choices(self.cjk_words, cum_weights=self.cjk_w, k=48)
        out = []
        for n, w in enumerate(words, start=1):
            out.append(w)
            if n % self.rng.randint(5, 12) == 0:
                out.append(self.rng.choice("，，，。、；"))
        return "".join(out) + "。"

    def _en_paragraph(self) -> str:
        words = self.rng.choices(self.en_words, cum_weights=self.en_w, k=55)
        return " ".join(words).capitalize() + "."

    def document(self, chinese: bool) -> tuple[str, str]:
        pool = self.paragraphs_zh if chinese else self.paragraphs_en
        paras = self.rng.sample(pool, 6)
        if chinese:
            title = "".join(self.rng.choices(self.cjk_words, cum_weights=self.cjk_w, k=8))
        else:
            title = " ".join(self.rng.choices(self.en_words, cum_weights=self.en_w, k=7)).title()
        return title, "".join(f"<p>{p}</p>" for p in paras)


def _english_words() -> tuple[list[str], list[float]]:
    counts: Counter[str] = Counter()
    for path in sorted(FEEDS.glob("*"))[:60]:
        text = re.sub(r"<[^>]+>", " ", path.read_text("utf-8", errors="ignore"))
        counts.update(w.lower() for w in re.findall(r"[A-Za-z]{2,14}", text))
    if len(counts) < 1000:  # no eval data next to the project: a generated vocabulary
        rng = random.Random(7)
        words = ["".join(rng.choices("etaoinshrdlucmfwypvbgkq", k=rng.randint(2, 9)))
                 for _ in range(30_000)]
        return words, list(itertools.accumulate(1 / (r + 1) for r in range(len(words))))
    common = counts.most_common(30_000)
    return [w for w, _ in common], list(itertools.accumulate(float(n) for _, n in common))


# ------------------------------------------------------------------------ phases

def feed_source(batch_no: int, sources: int) -> int:
    return batch_no * 7919 % sources


def item_key(i: int, source: int) -> str:
    return f"https://site{source}.example/{2023 + i // 400_000}/post-{i}.html"


def make_batch(corpus: Corpus, start: int, n: int, source: int
               ) -> tuple[list[NewItem], int]:
    """New items ``start`` .. ``start + n`` of one feed; the same items on every run."""
    items, text_bytes = [], 0
    for i in range(start, start + n):
        corpus.rng.seed(i)
        title, body = corpus.document(chinese=i % 2 == 0)
        text_bytes += len(title.encode()) + len(html_to_text(body).encode())
        when = START + timedelta(seconds=i * 30)
        key = item_key(i, source)
        items.append(NewItem(
            key=key, source_id=f"s{source}",
            fields=ItemFields(title=title, url=key, summary="", body=body,
                              body_state=BodyState.OK, published_at=when,
                              content_hash=hashlib.sha256(body.encode()).hexdigest(),
                              title_fp=hashlib.sha256(title.encode()).hexdigest()[:32]),
            discovered_at=when + timedelta(minutes=5), backfill=False))
    return items, text_bytes


@dataclass
class Progress:
    """What a kept database already holds (benchmarks/store.py --dir resumes)."""

    items: int = 0
    text_bytes: int = 0

    @staticmethod
    def load(path: Path) -> Progress:
        return Progress(**json.loads(path.read_text())) if path.exists() else Progress()

    def save(self, path: Path) -> None:
        path.write_text(json.dumps({"items": self.items, "text_bytes": self.text_bytes}))


def build(storage: SqliteStorage, corpus: Corpus, args: argparse.Namespace,
          progress: Progress, state: Path) -> tuple[list[float], list[float]]:
    """Grow the archive to ``args.items``; returns per-window new-item and index rates."""
    new_rates, index_rates = [], []
    spent = index_spent = 0.0
    indexed = since_index = 0
    window_start = progress.items
    while progress.items < args.items:
        n = min(args.batch, args.items - progress.items)
        batch, size = make_batch(corpus, progress.items, n,
                                 feed_source(progress.items // args.batch, args.sources))
        t0 = time.perf_counter()
        storage.apply_upserts(UpsertBatch(creates=batch))
        spent += time.perf_counter() - t0
        progress.items += n
        progress.text_bytes += size
        since_index += n
        if since_index >= INDEX_BATCH:
            since_index = 0
            t0 = time.perf_counter()
            while m := storage.index_pending(INDEX_BATCH):
                indexed += m
            index_spent += time.perf_counter() - t0
        if progress.items - window_start >= args.window or progress.items >= args.items:
            new_rates.append((progress.items - window_start) / spent)
            if indexed:
                index_rates.append(indexed / index_spent)
            print(f"  {progress.items:>9,} items  new {new_rates[-1]:8,.0f}/s  "
                  f"index {index_rates[-1] if indexed else 0:7,.0f}/s  "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
            progress.save(state)
            window_start, spent, index_spent, indexed = progress.items, 0.0, 0.0, 0
    return new_rates, index_rates


def _lookup_listing(storage: SqliteStorage, keys: list[str], bodies_for: list[str]
                    ) -> tuple[dict[str, ItemState], set[str]]:
    """What ``plan_prepared`` asks (``lookup_items`` + ``tombstoned`` in the code before
    ``lookup_listing``, so that old and new code can be run against each other)."""
    if hasattr(storage, "lookup_listing"):
        return storage.lookup_listing(keys, bodies_for=bodies_for)
    return storage.lookup_items(keys, bodies_for=bodies_for), storage.tombstoned(keys)


def relist(storage: SqliteStorage, args: argparse.Namespace, mode: str) -> float:
    """Listings seen before, as plan_prepared looks them up (bodies only for teasers);
    ``rediscover`` adds the discovery write of another source listing them."""
    rng = random.Random(3 + len(mode))
    seen = START + timedelta(days=4000)
    spent, n = 0.0, 0
    batches = args.items // args.batch
    for _ in range(args.relist_rounds):
        # "latest": a source's newest listing (what a feed shows again); else any listing
        back = rng.randrange(0, min(batches, args.sources) if mode == "latest" else batches)
        first = (batches - 1 - back) * args.batch
        source = feed_source(first // args.batch, args.sources)
        keys = [item_key(i, source) for i in range(first, min(first + args.batch, args.items))]
        t0 = time.perf_counter()
        states, _ = _lookup_listing(storage, keys, keys if mode == "teaser" else ())
        if mode == "rediscover":
            other = f"s{(source + 1) % args.sources}"
            storage.apply_upserts(UpsertBatch(discoveries=[
                Discovery(other, seen, item_id=s.id) for s in states.values()]))
        spent += time.perf_counter() - t0
        n += len(keys)
    return n / spent


def reprint_lookups(storage: SqliteStorage, args: argparse.Namespace) -> list[float]:
    """ms per ``fingerprint_groups`` of a 50-item page (what the timeline folds reprints
    with): the newest page first, then pages of items from anywhere in the archive."""
    rng = random.Random(5)
    pages = [[i.title_fp for i in storage.list_items(ItemQuery(limit=50))]]
    for _ in range(15):
        picks = [rng.randrange(args.items) for _ in range(50)]
        pages.append([storage.get_item_by_key(
            item_key(i, feed_source(i // args.batch, args.sources))).title_fp for i in picks])
    times = []
    for fps in pages:
        t0 = time.perf_counter()
        storage.fingerprint_groups(fps)
        times.append((time.perf_counter() - t0) * 1000)
    return sorted(times)


def index_bytes(path: Path) -> int:
    """Pages of the FTS shadow tables (name = ... lets dbstat skip the rest of the file)."""
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'item_search_%'")]
        (page,) = conn.execute("PRAGMA page_size").fetchone()
        # aggregate rows count pages in pageno (their pgsize sum overflows on big tables)
        return int(page) * sum(int(conn.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND aggregate = 1",
            (name,)).fetchone()[0]) for name in names)


def plain_reference(corpus: Corpus, n: int, batch: int) -> float:
    """The same rows and commits into one unindexed table: SQLite alone on this machine."""
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(Path(tmp) / "plain.sqlite3", isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, key TEXT, title TEXT, body TEXT, "
                     "published INTEGER)")
        spent = 0.0
        for start in range(0, n, batch):
            items, _ = make_batch(corpus, start, batch, feed_source(start // batch, 1000))
            rows = [(b.key, b.fields.title, b.fields.body, start) for b in items]
            t0 = time.perf_counter()
            conn.execute("BEGIN")
            conn.executemany("INSERT INTO t (key, title, body, published) VALUES (?, ?, ?, ?)",
                             rows)
            conn.execute("COMMIT")
            spent += time.perf_counter() - t0
        conn.close()
    return n // batch * batch / spent


def engine_ceiling(corpus: Corpus, n: int) -> float:
    """FTS5 alone: the same documents, tokenized before the clock starts, inserted into
    the store's own ``item_search`` table (same columns and settings) in ascending rowid
    order, 2,000 per commit. No item rows, no text rewriting: the bound on index build."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ceiling.sqlite3"
        SqliteStorage(path).close()  # the production schema, index settings included
        docs: list[tuple[object, ...]] = []
        for start in range(0, n, 33):
            items, _ = make_batch(corpus, start, 33, 0)
            docs.extend((start + k, *document(b.fields.title, b.fields.body, ""))
                        for k, b in enumerate(items))
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        t0 = time.perf_counter()
        for start in range(0, len(docs), INDEX_BATCH):
            conn.execute("BEGIN")
            conn.executemany(
                "INSERT INTO item_search (rowid, title, body, title_chars, body_chars) "
                "VALUES (?, ?, ?, ?, ?)", docs[start:start + INDEX_BATCH])
            conn.execute("COMMIT")
        spent = time.perf_counter() - t0
        conn.close()
    return len(docs) / spent


def trigram_reference(corpus: Corpus, n: int, queries: list[str]) -> tuple[float, float, float]:
    """FTS5 trigram over the same kind of text: build rate, size / text, p95 ms (3+ chars)."""
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(Path(tmp) / "tri.sqlite3", isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE VIRTUAL TABLE t USING fts5 (title, body, tokenize = 'trigram')")
        spent, text_bytes = 0.0, 0
        for start in range(0, n, 1000):
            rows = []
            for i in range(start, start + 1000):
                title, body = corpus.document(chinese=i % 2 == 0)
                text = html_to_text(body)
                text_bytes += len(title.encode()) + len(text.encode())
                rows.append((i, title, text))
            t0 = time.perf_counter()
            conn.execute("BEGIN")
            conn.executemany("INSERT INTO t (rowid, title, body) VALUES (?, ?, ?)", rows)
            conn.execute("COMMIT")
            spent += time.perf_counter() - t0
        (size,) = conn.execute(
            "SELECT sum(pgsize) FROM dbstat WHERE name IN ('t_data', 't_idx', 't_docsize')"
        ).fetchone()
        times = []
        for q in queries:
            t0 = time.perf_counter()
            conn.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY rank LIMIT 50",
                         ('"' + q.strip('"') + '"',)).fetchall()
            times.append((time.perf_counter() - t0) * 1000)
        conn.close()
    times.sort()
    return n / spent, size / text_bytes, times[int(len(times) * 0.95)]


# ----------------------------------------------------------------------- queries

def query_sets(corpus: Corpus, rng: random.Random) -> dict[str, list[str]]:
    """Queries of each kind, across frequencies (common to rare) and all present in the data."""
    zh_text = "".join(rng.sample(corpus.paragraphs_zh, 400))
    runs: list[str] = [r for r in re.findall(r"[\u4e00-\u9fff]+", zh_text) if len(r) >= 6]

    def piece(length: int) -> str:
        run = rng.choice([r for r in runs if len(r) >= length])
        at = rng.randrange(0, len(run) - length + 1)
        return run[at:at + length]

    ranks = [3, 10, 30, 100, 300, 1000, 2000, 3000]
    en_words = " ".join(rng.sample(corpus.paragraphs_en, 200)).lower().replace(".", "").split()
    en_pairs = [f"{a} {b}" for a, b in itertools.pairwise(en_words) if len(a) > 3 < len(b)]
    return {
        "zh-1": [corpus.chars[r] for r in ranks] * 2,
        "zh-2": [piece(2) for _ in range(16)],
        "zh-3": [piece(3) for _ in range(16)],
        "zh-6": [piece(6) for _ in range(16)],
        "en-1 word": [corpus.en_words[r] for r in (5, 20, 60, 200, 600, 2000, 6000, 15000)] * 2,
        "en-2 words": [f'"{pair}"' for pair in rng.sample(en_pairs, 16)],
    }


def timed(storage: SqliteStorage, query: SearchQuery) -> tuple[float, int]:
    t0 = time.perf_counter()
    hits = storage.search(query)
    return (time.perf_counter() - t0) * 1000, len(hits)


def run_queries(storage: SqliteStorage, sets: dict[str, list[str]]) -> None:
    print(f"{'query':<12} {'mode':<13} {'p50 ms':>8} {'p95 ms':>8} {'hits':>6}")
    for name, queries in sets.items():
        for ranked in (False, True):
            times, hits = [], 0
            for q in queries:
                terms = (q.strip('"'),)
                ms, n = timed(storage, SearchQuery(terms=terms, ranked=ranked, limit=50))
                times.append(ms)
                hits += n
            times.sort()
            p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
            mode = "ranked" if ranked else "newest-first"
            print(f"{name:<12} {mode:<13} {statistics.median(times):8.1f} {p95:8.1f} "
                  f"{hits // len(queries):6d}")


def median_line(label: str, rates: list[float], target: int) -> None:
    if rates:
        print(f"{label:<22} {statistics.median(rates):12,.0f}   last window {rates[-1]:,.0f}   "
              f"target {target:,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--sources", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=33, help="new items per feed listing")
    parser.add_argument("--window", type=int, default=50_000)
    parser.add_argument("--relist-rounds", type=int, default=1000)
    parser.add_argument("--dir", type=Path, default=None, help="keep the database here")
    parser.add_argument("--peers", action="store_true", help="also time FTS5 trigram")
    args = parser.parse_args()
    corpus = Corpus(random.Random(1))
    tmp = tempfile.TemporaryDirectory()
    path = (args.dir or Path(tmp.name)) / "bench.sqlite3"
    state = path.with_suffix(".json")
    if args.dir is None or not state.exists():
        path.unlink(missing_ok=True)
        state.unlink(missing_ok=True)
    progress = Progress.load(state)
    storage = SqliteStorage(path)
    if not progress.items:
        for s in range(args.sources):
            storage.add_source(Source(id=f"s{s}", kind=SourceKind("rss"),
                                      url=f"https://site{s}.example/feed", title=f"Site {s}",
                                      created_at=datetime.now(UTC)))
    print(f"{progress.items:,} -> {args.items:,} items in {path}, {args.batch} new items "
          f"per apply_upserts, load {os.getloadavg()[0]:.1f}")
    new_rates, index_rates = build(storage, corpus, args, progress, state)
    while storage.index_pending(INDEX_BATCH):
        pass
    args.items = progress.items
    latest_rate = relist(storage, args, "latest")
    relist_rate = relist(storage, args, "unchanged")
    teaser_rate = relist(storage, args, "teaser")
    rediscover_rate = relist(storage, args, "rediscover")
    size = index_bytes(path)
    plain_rate = plain_reference(corpus, 100_000, args.batch)
    median_line("new items/s", new_rates, TARGETS["new"])
    print(f"plain SQLite rows/s    {plain_rate:12,.0f}   (reference: same rows and commits, "
          "no indexes)")
    if new_rates:
        print(f"  new items / plain    {statistics.median(new_rates) / plain_rate:12.2f}")
    print(f"unchanged relists/s    {latest_rate:12,.0f}   target {TARGETS['unchanged']:,} "
          f"(each source's newest listing, {args.relist_rounds} listings of {args.batch})")
    print(f"  any older listing    {relist_rate:12,.0f}   (uniform over the archive: cold pages)")
    print(f"  teaser feeds         {teaser_rate:12,.0f}   (stored bodies loaded for inheritance)")
    print(f"rediscoveries/s        {rediscover_rate:12,.0f}   (lookups + discovery write)")
    median_line("index build items/s", index_rates, TARGETS["index"])
    ceiling_n = min(args.items, 50_000)
    print(f"  FTS5 alone           {engine_ceiling(corpus, ceiling_n):12,.0f}   (the same "
          f"table, {ceiling_n:,} pre-tokenized docs: the engine's bound)")
    print(f"indexed text           {progress.text_bytes / 2**20:12,.1f} MiB")
    print(f"index size             {size / 2**20:12,.1f} MiB   "
          f"ratio {size / progress.text_bytes:.2f} (target <= 2.0)")
    print(f"database file          {path.stat().st_size / 2**20:12,.1f} MiB")
    sets = query_sets(corpus, random.Random(2))
    run_queries(storage, sets)
    fp_times = reprint_lookups(storage, args)
    print(f"{'reprints':<12} {'50 per page':<13} {statistics.median(fp_times):8.1f} "
          f"{fp_times[int(len(fp_times) * 0.95)]:8.1f}")
    if args.peers:
        ref_n = min(args.items, 50_000)
        tri_rate, tri_ratio, tri_p95 = trigram_reference(
            corpus, ref_n, sets["zh-3"] + sets["zh-6"] + sets["en-2 words"])
        print(f"peer: FTS5 trigram on {ref_n:,} docs: {tri_rate:,.0f} docs/s, "
              f"index/text {tri_ratio:.2f}, ranked p95 {tri_p95:.1f} ms (3+ char queries)")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    storage.close()
    tmp.cleanup()


if __name__ == "__main__":
    main()
