"""JS literals of script bundles: tidings' reader (``readers/jsonlist/jsliteral.py``)
against chompjs, the library that parses JavaScript objects without running them.

Usage:  .venv/bin/python benchmarks/js_literal.py [--rounds 7] [--entries 2000]

Two questions, in one run. Agreement: on the golden literals of
tests/data/js_literals.json, how many each reads as the data they hold, and how
many of the literals that are not data (a call, a variable, a template string)
each refuses - the bundle adapter must fail loudly on those, not store
``"foo()"`` as a title. Speed: one bundle-shaped array literal of ``entries``
objects (unquoted keys, single-quoted strings with escapes, ``!0``/``!1``,
trailing commas), parsed ``rounds`` times each; the figure is the median time,
and the ratio chompjs / tidings.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chompjs

from tidings.readers.jsonlist.jsliteral import parse_literal
from tidings.readers.jsonlist.scan import ScanError

GOLDEN = Path(__file__).resolve().parent.parent / "tests" / "data" / "js_literals.json"


def bundle(entries: int) -> str:
    rows = [f"{{id:{n},title:'Post {n}: it\\'s \"news\" [{n}]',link:\"/blog/{n}\","
            f"desc:'{'word ' * 20}',hidden:!{n % 2},score:{n}.5e-1,tags:['a','b',],}}"
            for n in range(entries)]
    return "[" + ",".join(rows) + ",]"


def agreement(name: str, parse: Callable[[str], Any], golden: dict[str, Any]) -> None:
    same = 0
    for case in golden["literals"]:
        with contextlib.suppress(Exception):  # a failure counts as a miss
            same += parse(case["literal"]) == case["data"]
    refused = 0
    for bad in golden["not_data"]:
        try:
            parse(bad)
        except Exception:
            refused += 1
    print(f"{name:8} golden literals read as their data: {same}/{len(golden['literals'])}; "
          f"not-data refused: {refused}/{len(golden['not_data'])}")


def timed(parse: Callable[[str], Any], text: str, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        parse(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def deep(name: str, parse: Callable[[str], Any]) -> None:
    try:
        parse("[" * 5000 + "]" * 5000)
        print(f"{name:8} 5,000 levels deep: read")
    except ScanError as exc:
        print(f"{name:8} 5,000 levels deep: refused ({exc})")
    except RecursionError:
        print(f"{name:8} 5,000 levels deep: RecursionError raised")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--entries", type=int, default=2000)
    args = ap.parse_args()
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    agreement("tidings", parse_literal, golden)
    agreement("chompjs", chompjs.parse_js_object, golden)
    deep("tidings", parse_literal)
    deep("chompjs", chompjs.parse_js_object)
    text = bundle(args.entries)
    ours = timed(parse_literal, text, args.rounds)
    theirs = timed(chompjs.parse_js_object, text, args.rounds)
    print(f"speed, {args.entries:,} entries ({len(text) / 1e6:.2f} MB), median of "
          f"{args.rounds}: tidings {ours * 1000:.1f} ms, chompjs {theirs * 1000:.1f} ms, "
          f"chompjs/tidings {theirs / ours:.2f}x")


if __name__ == "__main__":
    main()
