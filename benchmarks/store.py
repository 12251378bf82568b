"""Storage benchmark: a synthetic archive (half Chinese, half English, ~2 KB bodies).

    .venv/bin/python benchmarks/store.py                 # 1,000,000 items
    .venv/bin/python benchmarks/store.py --items 100000  # quicker

Prints upsert rates (new items, unchanged re-listings), the search index build
rate and its size against the indexed text, query latencies (1/2/3/6-character
Chinese and English; newest first and ranked, snippets included) and, from the
same run, the rate of a plain SQLite executemany into an unindexed table.
"""

from __future__ import annotations

import argparse
import itertools
import random
import re
import sqlite3
import statistics
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tidings.model import BodyState, Source, SourceKind
from tidings.store.base import (
    Discovery,
    ItemFields,
    NewItem,
    SearchQuery,
    UpsertBatch,
)
from tidings.store.sqlite import SqliteStorage
from tidings.store.textindex import html_to_text

FEEDS = Path(__file__).resolve().parents[2] / "shared" / "eval" / "feeds"
BATCH = 1000
LISTING = 60
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

def make_batch(corpus: Corpus, start: int, n: int, sources: int) -> tuple[list[NewItem], int]:
    items, text_bytes = [], 0
    for i in range(start, start + n):
        title, body = corpus.document(chinese=i % 2 == 0)
        text_bytes += len(title.encode()) + len(html_to_text(body).encode())
        when = START + timedelta(seconds=i * 30)
        items.append(NewItem(
            key=f"https://site{i % sources}.example/post/{i}", source_id=f"s{i % sources}",
            fields=ItemFields(title=title, url=f"https://site{i % sources}.example/post/{i}",
                              summary="", body=body, body_state=BodyState.OK,
                              published_at=when, content_hash=f"{i:064x}",
                              title_fp=f"{i * 7919 % 10**12:032x}"),
            discovered_at=when + timedelta(minutes=5), backfill=False))
    return items, text_bytes


def build(storage: SqliteStorage, corpus: Corpus, total: int, sources: int) -> tuple[float, int]:
    spent, text_bytes = 0.0, 0
    for start in range(0, total, BATCH):
        batch, size = make_batch(corpus, start, min(BATCH, total - start), sources)
        text_bytes += size
        t0 = time.perf_counter()
        storage.apply_upserts(UpsertBatch(creates=batch))
        spent += time.perf_counter() - t0
        if start and start % 100_000 == 0:
            print(f"  ... {start:,} items", flush=True)
    return total / spent, text_bytes


def relist(storage: SqliteStorage, total: int, sources: int, rounds: int) -> float:
    rng = random.Random(3)
    seen = START + timedelta(days=400)
    t0 = time.perf_counter()
    for _ in range(rounds):
        first = rng.randrange(0, total - LISTING * sources)
        source = first % sources
        keys = [f"https://site{source}.example/post/{i}"
                for i in range(first, first + LISTING * sources, sources)]
        states = storage.lookup_items(keys)
        storage.apply_upserts(UpsertBatch(discoveries=[
            Discovery(f"s{source}", seen, item_id=s.id) for s in states.values()]))
    return rounds * LISTING / (time.perf_counter() - t0)


def index_all(storage: SqliteStorage) -> tuple[float, int]:
    done, t0 = 0, time.perf_counter()
    while n := storage.index_pending(5000):
        done += n
    return done / (time.perf_counter() - t0), done


def index_bytes(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        (size,) = conn.execute(
            "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'item_search%'").fetchone()
    return int(size)


def plain_reference(corpus: Corpus, n: int, sources: int) -> float:
    """The same rows into one unindexed table: what SQLite alone does on this machine."""
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(Path(tmp) / "plain.sqlite3", isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, key TEXT, title TEXT, body TEXT, "
                     "published INTEGER)")
        spent = 0.0
        for start in range(0, n, BATCH):
            batch, _ = make_batch(corpus, start, BATCH, sources)
            rows = [(b.key, b.fields.title, b.fields.body, start) for b in batch]
            t0 = time.perf_counter()
            conn.execute("BEGIN")
            conn.executemany("INSERT INTO t (key, title, body, published) VALUES (?, ?, ?, ?)",
                             rows)
            conn.execute("COMMIT")
            spent += time.perf_counter() - t0
        conn.close()
    return n / spent


def trigram_reference(corpus: Corpus, n: int, queries: list[str]) -> tuple[float, float, float]:
    """FTS5 trigram over the same kind of text: build rate, size / text, p95 ms (3+ chars)."""
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(Path(tmp) / "tri.sqlite3", isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE VIRTUAL TABLE t USING fts5 (title, body, tokenize = 'trigram')")
        spent, text_bytes = 0.0, 0
        for start in range(0, n, BATCH):
            rows = []
            for i in range(start, start + BATCH):
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
    runs = [r for r in re.findall(r"[\u4e00-\u9fff]+", zh_text) if len(r) >= 6]

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--sources", type=int, default=1000)
    parser.add_argument("--relist-rounds", type=int, default=1000)
    parser.add_argument("--dir", type=Path, default=None, help="keep the database here")
    args = parser.parse_args()
    rng = random.Random(1)
    corpus = Corpus(rng)
    tmp = tempfile.TemporaryDirectory()
    path = (args.dir or Path(tmp.name)) / "bench.sqlite3"
    path.unlink(missing_ok=True)
    storage = SqliteStorage(path)
    for s in range(args.sources):
        storage.add_source(Source(id=f"s{s}", kind=SourceKind.RSS,
                                  url=f"https://site{s}.example/feed", title=f"Site {s}"))
    print(f"building {args.items:,} items in {path}")
    new_rate, text_bytes = build(storage, corpus, args.items, args.sources)
    relist_rate = relist(storage, args.items, args.sources, args.relist_rounds)
    index_rate, indexed = index_all(storage)
    size = index_bytes(path)
    plain_rate = plain_reference(corpus, min(args.items, 100_000), args.sources)
    print(f"new items/s            {new_rate:12,.0f}   target {TARGETS['new']:,}")
    print(f"unchanged relists/s    {relist_rate:12,.0f}   target {TARGETS['unchanged']:,}")
    print(f"plain SQLite rows/s    {plain_rate:12,.0f}   (reference, same rows, no indexes)")
    print(f"  new items / plain    {new_rate / plain_rate:12.2f}")
    print(f"index build items/s    {index_rate:12,.0f}   target {TARGETS['index']:,} "
          f"({indexed:,} items)")
    print(f"indexed text           {text_bytes / 2**20:12,.1f} MiB")
    print(f"index size             {size / 2**20:12,.1f} MiB   "
          f"ratio {size / text_bytes:.2f} (target <= 2.0)")
    print(f"database file          {path.stat().st_size / 2**20:12,.1f} MiB")
    sets = query_sets(corpus, rng)
    run_queries(storage, sets)
    ref_n = min(args.items, 50_000)
    tri_rate, tri_ratio, tri_p95 = trigram_reference(
        corpus, ref_n, sets["zh-3"] + sets["zh-6"] + sets["en-2 words"])
    print(f"peer: FTS5 trigram on {ref_n:,} docs: {tri_rate:,.0f} docs/s, "
          f"index/text {tri_ratio:.2f}, ranked p95 {tri_p95:.1f} ms (3+ char queries)")
    print(f"  our index build rate / trigram build rate {index_rate / tri_rate:.2f}")
    storage.close()
    tmp.cleanup()


if __name__ == "__main__":
    main()
