"""Feed parsing speed: tidings' parse_feed against feedparser (and fastfeedparser).

Usage:  .venv/bin/python benchmarks/parse.py [--rounds 5] [--feeds DIR]

Runs every feed of the evaluation corpus (manifest.json) through each parser in
the same process, prints feeds/s and MB/s (median of the rounds; feedparser is
run once because it is slow), the ratio, the latency of 150-250 KB feeds, and
every file where our entry count differs from feedparser's on a document
feedparser read without error.

"lxml tree only" builds each tree and reads every element's text once, nothing
more: the floor of any lxml-based parser, printed as a share of the CPU a parser
50x faster than feedparser may spend.

Wall-clock seconds are the headline figures. The CPU seconds of the process are
printed too: on the shared, often loaded machine they are what the parsers
themselves cost, while wall time also counts waiting for a core.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastfeedparser
import feedparser
from lxml import etree

from tidings.errors import ParseError
from tidings.readers.rss import parse_feed

DEFAULT_FEEDS = Path(__file__).resolve().parents[2] / "shared" / "eval" / "feeds"


def load(folder: Path) -> list[tuple[str, bytes]]:
    manifest = json.loads((folder / "manifest.json").read_text())
    return [(e["file"], (folder / e["file"]).read_bytes()) for e in manifest]


def ours(name: str, data: bytes) -> int:
    try:
        return len(parse_feed(data, url=f"https://example.org/{name}").items)
    except ParseError:
        return -1


def reference(name: str, data: bytes) -> int:
    return len(feedparser.parse(data).entries)


def fast(name: str, data: bytes) -> int:
    try:
        return len(fastfeedparser.parse(data).entries)
    except Exception:  # fastfeedparser raises bare ValueErrors and others
        return -1


_TREE = etree.XMLParser(recover=True, huge_tree=True, resolve_entities=False, no_network=True)


def tree_only(name: str, data: bytes) -> int:
    """The floor of any lxml-based parser: build the tree and read every element's text
    once, nothing else (no entries, no dates, no links)."""
    try:
        root = etree.fromstring(data, _TREE)
    except etree.XMLSyntaxError:
        return -1
    if root is None:
        return -1
    for element in root.iter():
        _ = element.text
    return 0


def timed_round(
    fn: Callable[[str, bytes], int], feeds: list[tuple[str, bytes]]
) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one pass over the corpus."""
    start, cpu = time.perf_counter(), time.process_time()
    for name, data in feeds:
        fn(name, data)
    return time.perf_counter() - start, time.process_time() - cpu


def latency_ms(feeds: list[tuple[str, bytes]], lo: int, hi: int, repeat: int = 5) -> list[float]:
    out = []
    for name, data in feeds:
        if lo <= len(data) <= hi:
            runs = []
            for _ in range(repeat):
                start = time.perf_counter()
                ours(name, data)
                runs.append(time.perf_counter() - start)
            out.append(min(runs) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--feeds", type=Path, default=DEFAULT_FEEDS)
    args = ap.parse_args()
    feeds = load(args.feeds)
    total_mb = sum(len(d) for _, d in feeds) / 1e6
    print(f"{len(feeds)} feeds, {total_mb:.1f} MB, {args.rounds} rounds (feedparser: 1)")

    parsers = {"tidings": ours, "fastfeedparser": fast, "lxml tree only": tree_only,
               "feedparser": reference}
    for fn in parsers.values():
        fn(*feeds[0])  # warm up imports and caches
    rounds: dict[str, list[tuple[float, float]]] = {label: [] for label in parsers}
    for n in range(args.rounds):  # interleaved, so load from elsewhere hits all alike
        for label, fn in parsers.items():
            if label != "feedparser" or n == args.rounds // 2:
                rounds[label].append(timed_round(fn, feeds))
    results = {label: statistics.median(w for w, _ in times) for label, times in rounds.items()}
    cpu = {label: statistics.median(c for _, c in times) for label, times in rounds.items()}
    for label, secs in results.items():
        print(f"{label:15s} {secs:7.3f} s  {len(feeds) / secs:8.1f} feeds/s  "
              f"{total_mb / secs:7.1f} MB/s   (CPU {cpu[label]:7.3f} s)")
    print(f"ratio tidings/feedparser: {results['feedparser'] / results['tidings']:.1f}x faster"
          f" (CPU time: {cpu['feedparser'] / cpu['tidings']:.1f}x)")
    print(f"ratio tidings/fastfeedparser: {results['fastfeedparser'] / results['tidings']:.2f}x"
          f" (CPU time: {cpu['fastfeedparser'] / cpu['tidings']:.2f}x)")

    budget = cpu["feedparser"] / 50
    print(f"CPU budget of a parser 50x feedparser: {budget:.3f} s; lxml tree only uses "
          f"{cpu['lxml tree only']:.3f} s of it ({cpu['lxml tree only'] / budget:.0%})")

    lat = latency_ms(feeds, 150_000, 250_000)
    if lat:
        print(f"150-250 KB feeds: n={len(lat)} median {statistics.median(lat):.2f} ms, "
              f"max {max(lat):.2f} ms")
    report_mismatches(feeds)


def report_mismatches(feeds: list[tuple[str, bytes]]) -> None:
    mismatches = 0
    for name, data in feeds:
        parsed: Any = feedparser.parse(data)
        mine = ours(name, data)
        if not parsed.bozo and mine != len(parsed.entries):
            mismatches += 1
            print(f"MISMATCH {name}: tidings {mine}, feedparser {len(parsed.entries)}")
        elif parsed.bozo:
            print(f"bozo for feedparser {name}: tidings {mine}, feedparser {len(parsed.entries)}")
    print(f"entry-count mismatches on feedparser-clean files: {mismatches}")


if __name__ == "__main__":
    main()
