"""Online story clustering at archive scale: items/s and the index's memory, and
quality on the labelled sets; MinHash alone and MinHash + meaning side by side.

    .venv/bin/python benchmarks/cluster_stories.py --items 100000 --days 36.5
    .venv/bin/python benchmarks/cluster_stories.py --meaning-items 20000

A synthetic stream of ``--items`` items over ``--days`` days (stories told by 1-12
sources, words from a Zipf-like vocabulary, English and Chinese) is placed one by
one in the 72 h index, as the runner's job places new items; the index holds only
the window, so its memory depends on items per 72 h, not on the archive. The peer
is the plain-Python baseline the issue names no library for: every item compared
with every item of the window, timed on the first window's worth only.
Printed: items/s (median of per-chunk rates), the index's memory (peak RSS growth).

Meaning (issue 31): the labelled sets of tests/data/stories (``meaning.json``'s tune
and held-out check parts, and the older real-style set) clustered by MinHash alone
and by MinHash + meaning; then the same synthetic stream at the density of a
1,000,000-items-a-year archive, placed in batches of 500 as the job places them,
embedding included (one BLAS thread), against MinHash alone on the same items:
items per CPU second, the index's memory, and the encoder's own (its weights, once
per process).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import random
import statistics
import sys
import time
from collections.abc import Iterator

import psutil

from tidings.identity.shingles import story_shingles, story_text
from tidings.identity.storyindex import StoryIndex, StoryItem, item_of, similarity

HOUR = 3_600_000_000
ZH = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动"
    "同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自"
    "二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日"
    "那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变"
    "条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总"
    "次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指"
    "几九区强放决西被干做必战先回则任取据处府"
)
_EN_TEXT = """
market election model court energy vaccine league startup chip storm policy
budget bank rates quake launch merger strike summit treaty satellite outage
breach tariff ceasefire verdict festival drought pipeline reactor museum
orchestra rover
"""
EN = _EN_TEXT.split()


def _text(rng: random.Random, story: int, lang: str) -> tuple[str, str]:
    srng = random.Random(story)
    if lang == "zh":
        core = "".join(srng.choices(ZH, k=30))
        noise = "".join(rng.choices(ZH, k=20))
        return core[:12] + noise[:4], core[12:] + noise[4:]
    core = [f"{w}{srng.randrange(1000)}" for w in srng.choices(EN, k=16)]
    noise = [rng.choice(EN) for _ in range(8)]
    return " ".join(core[:6] + noise[:2]), " ".join(core[6:] + noise[2:])


def stream(n: int, days: float, seed: int = 7) -> Iterator[StoryItem]:
    """``n`` items in time order, made as they are consumed (a million would not fit)."""
    for item, _text in texts(n, days, seed):
        yield item


def texts(n: int, days: float, seed: int = 7) -> Iterator[tuple[StoryItem, str]]:
    """The stream's items with the text an encoder would embed (title. lead)."""
    rng = random.Random(seed)
    span = int(days * 24 * HOUR)
    made = 0
    story = 0
    while made < n:
        story += 1
        at = int(made / n * span)
        lang = "zh" if story % 4 == 0 else "en"
        for copy in range(min(rng.choice([1, 1, 1, 2, 3, 5, 12]), n - made)):
            title, lead = _text(rng, story, lang)
            sh = story_shingles(story_text(title, lead, None))
            made += 1
            yield (item_of(made, f"s{rng.randrange(3000)}", at + copy * HOUR // 2, sh),
                   f"{title}. {lead}")


def run_index(items: Iterator[StoryItem], chunk: int = 10_000
              ) -> tuple[float, float, float, int, int]:
    """Place every item; the rate counts placing only (the stream's shingling is the
    job's too, so it is timed apart in ``shingle_rate``), by the wall clock and by the
    process's CPU time (on a shared machine the wall rate measures the neighbours' load
    as much as the index). Memory: the process's peak
    resident size above what it held before the index existed (the stream holds one
    chunk at a time)."""
    me = psutil.Process()
    gc.collect()
    base = me.memory_info().rss
    peak = base
    index = StoryIndex()
    rates, cpu_rates = [], []
    total = 0
    while part := list(itertools.islice(items, chunk)):
        t, cpu = time.perf_counter(), time.process_time()
        index.learn(part)
        for x in part:
            index.place(x)
        rates.append(len(part) / (time.perf_counter() - t))
        cpu_rates.append(len(part) / max(time.process_time() - cpu, 1e-9))
        total += len(part)
        peak = max(peak, me.memory_info().rss)
        if total % 100_000 == 0:
            print(f"  {total:,} placed, {rates[-1]:,.0f} items/s, {len(index):,} held",
                  file=sys.stderr, flush=True)
    return (statistics.median(rates), statistics.median(cpu_rates), (peak - base) / 2**20,
            len(index), total)


def shingle_rate(n: int = 20_000) -> float:
    t = time.perf_counter()
    for _ in itertools.islice(stream(n, 30), n):
        pass
    return n / (time.perf_counter() - t)


def run_naive(items: list[StoryItem]) -> float:
    window: list[StoryItem] = []
    t = time.perf_counter()
    for x in items:
        window = [w for w in window if x.at - w.at <= 72 * HOUR]
        max((similarity(x.hashes, w.hashes, x.title, w.title) for w in window), default=0.0)
        window.append(x)
    return len(items) / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--days", type=float, default=365.0)
    ap.add_argument("--meaning-items", type=int, default=0,
                    help="run the meaning comparison on this many stream items instead")
    args = ap.parse_args()
    if args.meaning_items:
        from cluster_meaning import run_meaning

        run_meaning(args.meaning_items)
        return
    print(f"{args.items:,} items over {args.days:g} days "
          f"({args.items / args.days * 3:,.0f} per 72 h window)")
    rate, cpu_rate, peak, held, total = run_index(stream(args.items, args.days))
    window = list(itertools.islice(stream(args.items, args.days), 5000))
    naive = run_naive(window)
    print(f"MinHash LSH index: {rate:,.0f} items/s placed (wall clock; {cpu_rate:,.0f} per "
          f"CPU second; medians of 10k-item chunks) over "
          f"{total:,} items; index memory (peak RSS growth) {peak:,.0f} MiB; "
          f"{held:,} items held at the end")
    print(f"shingling (title + lead -> hashes): {shingle_rate():,.0f} items/s")
    print(f"all-pairs over the window (peer, first {len(window):,} items): {naive:,.0f} items/s")
    print(f"ratio: {rate / naive:.1f}x")


if __name__ == "__main__":
    main()
