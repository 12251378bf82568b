"""Body extraction benchmark: tidings vs trafilatura vs readability-lxml, same run.

Scores with the data set's own evaluate.py (precision / recall / F1 over 4-word
shingles, every page weighing the same) on ../shared/eval/extraction/.
Each system runs over all pages ``--rounds`` times; seconds are the fastest round.

    .venv/bin/python benchmarks/extract.py [--rounds 3] [--limit N]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "eval" / "extraction"


def _evaluate_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_extraction_evaluate", DATA / "evaluate.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {DATA / 'evaluate.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    ev = _evaluate_module()
    gt, pages = ev.load_pages(DATA)
    if args.limit:
        keep = sorted(gt)[: args.limit]
        gt = {k: gt[k] for k in keep}
        pages = {k: pages[k] for k in keep}
    systems: dict[str, Callable[[str, str], str]] = {
        "tidings": ev.make_system("py:tidings.extract:body_text"),
        "trafilatura": ev.make_system("trafilatura"),
        "readability+html-text": ev.make_system("readability"),
    }
    results: dict[str, tuple[dict[str, float], float]] = {}
    for name, fn in systems.items():
        times = []
        preds: dict[str, str] = {}
        for _ in range(args.rounds):
            preds, seconds, errors = ev.run_system(fn, gt, pages)
            times.append(seconds)
            if errors:
                print(f"{name}: {errors} pages raised", file=sys.stderr)
        results[name] = (ev.score(gt, preds, [4], 0)["n4"], min(times))
    print(f"{len(gt)} pages, fastest of {args.rounds} rounds")
    print(f"{'system':<22} {'precision':>9} {'recall':>7} {'F1':>6} {'seconds':>8}")
    for name, (m, secs) in results.items():
        print(f"{name:<22} {m['precision']:>9.3f} {m['recall']:>7.3f} {m['f1']:>6.3f} {secs:>8.2f}")
    ours, ours_t = results["tidings"]
    for peer in ("trafilatura", "readability+html-text"):
        m, secs = results[peer]
        print(f"tidings / {peer}: F1 {ours['f1'] - m['f1']:+.3f}, time x{ours_t / secs:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
