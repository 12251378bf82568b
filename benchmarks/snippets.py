"""Search snippets cut from real feed bodies: the whole body's text against a prefix.

A search page makes 50 snippets. ``html_snippet`` converts the first 2 KB of a
body's markup and converts the whole only when the window around the first
match does not fit in that; it is measured against converting every body
whole, which it must match snippet for snippet. Bodies are
the entries of the public evaluation feeds (``../shared/eval/feeds``, parsed
with tidings' own feed parser), and the queries are a common word, a rare one
(most bodies lack it: the worst case, the first try is wasted) and none (a
search by filters only cuts from the start). Printed: microseconds per snippet,
the median of ``--repeat`` passes, and whether both ways gave the same snippets.

    .venv/bin/python benchmarks/snippets.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from tidings.errors import TidingsError
from tidings.readers.rss.parse import parse_feed
from tidings.store.textindex import highlighter, html_snippet, html_to_text, snippet

FEEDS = Path(__file__).resolve().parents[2] / "shared" / "eval" / "feeds"
QUERIES = {"common words (the, data)": ["the", "data"], "rare word (kubernetes)": ["kubernetes"],
           "no words (filters only)": []}


def bodies() -> list[str]:
    out: list[str] = []
    for path in sorted(FEEDS.iterdir()):
        try:
            feed = parse_feed(path.read_bytes(), url=f"https://example.com/{path.name}")
        except TidingsError:  # a feed the parser refuses adds no bodies
            continue
        out.extend(b for b in (i.body or i.summary for i in feed.items) if b and len(b) > 200)
    return out


def _whole(markup: str, pattern: re.Pattern[str] | None) -> str:
    return snippet(html_to_text(markup), pattern)


def per_snippet(cut: Callable[[str], str], texts: list[str], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        for text in texts:
            cut(text)
        runs.append((time.perf_counter() - started) / len(texts) * 1e6)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    texts = bodies()
    sizes = sorted(map(len, texts))
    print(f"{len(texts)} bodies, median {sizes[len(sizes) // 2]:,} characters of markup, "
          f"90th percentile {sizes[len(sizes) * 9 // 10]:,}")
    print(f"{'query':28} {'whole us':>9} {'prefix us':>10} {'ratio':>6}  same")
    for name, terms in QUERIES.items():
        pattern = highlighter(terms)
        whole = per_snippet(partial(_whole, pattern=pattern), texts, args.repeat)
        prefix = per_snippet(partial(html_snippet, pattern=pattern), texts, args.repeat)
        same = all(html_snippet(b, pattern) == snippet(html_to_text(b), pattern) for b in texts)
        print(f"{name:28} {whole:9.1f} {prefix:10.1f} {whole / prefix:5.2f}x  {same}")


if __name__ == "__main__":
    main()
