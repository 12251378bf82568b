"""X articles' Draft.js content as HTML: draftjs-exporter (what tidings renders with,
``readers/x/draft.py``) against the renderer tidings wrote before it
(``benchmarks/draft_ours.py``).

Usage:  .venv/bin/python benchmarks/draft_render.py [--rounds 7] [--repeat 200]

Agreement: on the golden content states of tests/data/paid/draft_states.json,
how often the two give the same HTML, as rendered and after the sanitizer every
stored body goes through (``tidings.extract.sanitize.sanitize_html``), and where
they differ. Speed: the golden X article and a long one (its blocks 40 times,
about 240 blocks), each rendered ``repeat`` times per round; the figure is the
median over the rounds of the time per article, and the ratio library / ours.
An article is rendered once, when its item is stored.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tidings.extract.sanitize import sanitize_html
from tidings.readers.x.draft import draft_to_html

sys.path.insert(0, str(Path(__file__).resolve().parent))
from draft_ours import draft_to_html as ours

GOLDEN = Path(__file__).resolve().parent.parent / "tests" / "data" / "paid" / "draft_states.json"
Render = Callable[[Mapping[str, Any]], str]


def agreement(cases: list[dict[str, Any]]) -> None:
    raw = clean = 0
    for case in cases:
        a, b = draft_to_html(case["content"]), ours(case["content"])
        raw += a == b
        same = sanitize_html(a) == sanitize_html(b)
        clean += same
        if not same:
            print(f"  differs after sanitizing: {case['name']}\n    library: {a}\n    ours:    {b}")
    print(f"golden states: same HTML {raw}/{len(cases)}, same after sanitizing "
          f"{clean}/{len(cases)}")


def per_article(render: Render, content: Mapping[str, Any], rounds: int, repeat: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeat):
            render(content)
        times.append((time.perf_counter() - start) / repeat)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    cases = json.loads(GOLDEN.read_text(encoding="utf-8"))
    agreement(cases)
    article = next(c["content"] for c in cases if c["name"] == "x_article")
    long = {"blocks": article["blocks"] * 40, "entityMap": article["entityMap"]}
    for name, content, repeat in (("golden article", article, args.repeat),
                                  ("long article", long, max(1, args.repeat // 20))):
        lib = per_article(draft_to_html, content, args.rounds, repeat)
        own = per_article(ours, content, args.rounds, repeat)
        print(f"{name} ({len(content['blocks'])} blocks): draftjs-exporter "
              f"{lib * 1e6:.0f} us, ours {own * 1e6:.0f} us, library/ours {lib / own:.2f}x")


if __name__ == "__main__":
    main()
