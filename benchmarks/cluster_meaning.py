"""Story clustering by meaning (issue 31), MinHash alone beside MinHash + meaning:
quality on the labelled sets, then placement speed and memory on the synthetic
stream of cluster_stories.py. Run as ``cluster_stories.py --meaning-items N``."""

from __future__ import annotations

import gc
import itertools
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import story_eval as ev
from cluster_stories import texts
from tidings.identity.meaning import LocalEncoder, marks_of
from tidings.identity.shingles import story_text
from tidings.identity.storyindex import StoryIndex

BATCH = 500  # the job's batch (pipeline.stories.BATCH)


def quality() -> None:
    sets = [("meaning.json tune", ev.meaning_set("tune"), ev.near_misses("tune")),
            ("meaning.json check (held out)", ev.meaning_set("check"), ev.near_misses("check")),
            ("labelled.json real-style (older)", ev.real_style(), set())]
    print("| set | method | pairwise P | pairwise R | cross-language R | B-cubed P | "
          "B-cubed R | near-miss merges | roundup merges |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, items, near in sets:
        views = ev.embedded(items)
        for label, index in (("MinHash alone", StoryIndex(meaning=None)),
                             ("MinHash + meaning", StoryIndex())):
            s = ev.meaning_scores(items, ev.cluster_items(index, views), near)
            o = s.overall
            print(f"| {name} | {label} | {o.precision:.3f} | {o.recall:.3f} | "
                  f"{s.cross_recall:.3f} ({s.cross_pairs}) | {o.b3_precision:.3f} | "
                  f"{o.b3_recall:.3f} | {s.near_miss_merges} | {s.roundup_merges} |")


def _rss() -> int:
    gc.collect()
    return int(psutil.Process().memory_info().rss)


def speed(n: int) -> None:
    days = n / 1_000_000 * 365  # the density of a million items a year
    window = int(n / days * 3)
    before = _rss()
    encoder = LocalEncoder()
    t = time.perf_counter()
    encoder.encode(["warm up"])
    print(f"\nencoder: loaded in {time.perf_counter() - t:.1f} s, "
          f"{(_rss() - before) / 2**20:,.0f} MiB resident (its weights, once per process)")
    stream = list(texts(n, days))
    print(f"{n:,} items at the density of 1,000,000 a year ({window:,} per 72 h window); "
          f"rates after the first window, batches of {BATCH}")
    for meaning in (False, True):
        base = peak = _rss()
        index = StoryIndex() if meaning else StoryIndex(meaning=None)
        cpu_rates, wall_rates, placed = [], [], 0
        chunks = iter(stream)
        while part := list(itertools.islice(chunks, BATCH)):
            t, cpu = time.perf_counter(), time.process_time()
            items = [item for item, _ in part]
            if meaning:
                vectors = encoder.encode([text for _, text in part])
                items = [replace(item, vector=v, marks=marks_of(story_text(text, "", None)))
                         for (item, text), v in zip(part, vectors, strict=True)]
            index.learn(items)
            for x in items:
                index.place(x)
            placed += len(part)
            if placed > window:
                cpu_rates.append(len(part) / max(time.process_time() - cpu, 1e-9))
                wall_rates.append(len(part) / (time.perf_counter() - t))
            peak = max(peak, int(psutil.Process().memory_info().rss))
        label = "MinHash + meaning (embedding included)" if meaning else "MinHash alone"
        print(f"{label}: {statistics.median(cpu_rates):,.0f} items per CPU second, "
              f"{statistics.median(wall_rates):,.0f} items/s wall clock (medians of "
              f"{len(cpu_rates)} batches); index memory (peak RSS growth) "
              f"{(peak - base) / 2**20:,.0f} MiB, {len(index):,} items held")
        del index


def run_meaning(n: int) -> None:
    quality()
    speed(n)
