"""Collection rounds over the shared feed farm: tidings vs reader vs a bare fetch.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/collect.py [--feeds 1000] [--hosts 32] [--latency none,realistic]

For each latency profile the farm is started fresh; then, one system after the
other (the farm is reset in between, so each sees the same feeds):

* tidings as a subprocess: ``tidings import-opml`` + ``tidings collect --once``
  (round 1), farm ``/_tick``, ``tidings collect --all`` (round 2, conditional);
* the ``reader`` library through ../shared/bench/reader_round.py with
  ``workers=32`` (its fastest documented setting), the same two rounds;
* a bare fetch of the same URLs with aiohttp (no parsing, no storage: the ceiling).

Printed: feeds/s, items/s, peak memory (RSS of the process tree), the ratios, and
for tidings when the last item became searchable (indexing runs behind the round).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "bench"
TIDINGS = [str(ROOT / ".venv" / "bin" / "tidings")]


@dataclass
class Round:
    seconds: float
    feeds: int
    items: int
    peak_mb: float
    extra: str = ""

    @property
    def feeds_per_s(self) -> float:
        return self.feeds / self.seconds if self.seconds else 0.0

    @property
    def items_per_s(self) -> float:
        return self.items / self.seconds if self.seconds else 0.0


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read()


def run_measured(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Run ``cmd``, polling the RSS of its whole process tree; (seconds, peak MB, stdout)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    ps = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        try:
            rss = ps.memory_info().rss + sum(c.memory_info().rss for c in ps.children(True))
            peak = max(peak, rss)
        except psutil.Error:
            pass
        time.sleep(0.02)
    out, err = proc.communicate()
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{cmd[:3]} failed ({proc.returncode}): {err[-2000:]}")
    return seconds, peak / 2**20, out


class FarmProcess:
    def __init__(self, feeds: int, hosts: int, latency: str) -> None:
        self.tmp = tempfile.mkdtemp(prefix="farm-")
        port_file = Path(self.tmp) / "url"
        self.proc = subprocess.Popen(
            [sys.executable, str(SHARED / "feedfarm.py"), "--feeds", str(feeds), "--hosts",
             str(hosts), "--latency", latency, "--hang-seconds", "60",
             "--port-file", str(port_file)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("feed farm did not start")
            time.sleep(0.2)
        self.url = port_file.read_text().strip()

    def reset(self) -> None:
        get(self.url + "/_reset")

    def tick(self) -> None:
        get(self.url + "/_tick")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def tidings_rounds(farm: FarmProcess, feeds: int, extra_env: dict[str, str]
                   ) -> tuple[Round, Round, float]:
    data = tempfile.mkdtemp(prefix="tidings-bench-")
    # The farm's 32 loopback hosts stand in for ~1,000 real ones, where spacing between
    # requests to one host never binds; the per-host limit of 2 stays (as in the bare fetch).
    env = {**os.environ, "TIDINGS_HOME": data, "TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.0/8",
           "TIDINGS_PER_HOST_DELAY": "0", **extra_env}
    opml = Path(data) / "farm.opml"
    opml.write_bytes(get(farm.url + "/feeds.opml"))
    subprocess.run([*TIDINGS, "init", "--empty"], env=env, check=True, capture_output=True)
    rounds = []
    index_s = 0.0
    # collection only: body extraction after the round is measured on its own
    for n, args in enumerate((["collect", "--once", "--no-extract", "--json"],
                              ["collect", "--all", "--no-extract", "--json"])):
        if n == 0:
            s_import, peak_i, _ = run_measured([*TIDINGS, "import-opml", str(opml)], env)
        else:
            farm.tick()
            s_import, peak_i = 0.0, 0.0
        seconds, peak, out = run_measured([*TIDINGS, *args], env)
        summary = json.loads(out)
        collect_s = summary["seconds"] + s_import
        index_s = summary["index_seconds"]
        rounds.append(Round(collect_s, feeds, summary["created"], max(peak, peak_i),
                            f"ok {summary['ok']}, failed {summary['failed']}, 304 "
                            f"{summary['not_modified']}, process {seconds:.1f}s, "
                            f"searchable +{index_s:.2f}s"))
    return rounds[0], rounds[1], index_s


def reader_rounds(farm: FarmProcess, feeds: int, workers: int) -> tuple[Round, Round]:
    data = tempfile.mkdtemp(prefix="reader-bench-")
    urls = Path(data) / "feeds.txt"
    urls.write_bytes(get(farm.url + "/feeds.txt"))
    rounds = []
    for n in range(2):
        if n:
            farm.tick()
        cmd = [sys.executable, str(SHARED / "reader_round.py"), "--feeds-file", str(urls),
               "--data-dir", data, "--workers", str(workers), "--timeout", "20"]
        _, peak, out = run_measured(cmd, dict(os.environ))
        report = json.loads(out.strip().splitlines()[-1])
        rounds.append(Round(report["update_s"] + report["add_s"], feeds, report["new_entries"],
                            peak, f"broken {report['broken_feeds']}"))
    return rounds[0], rounds[1]


async def bare_fetch(urls: list[str], concurrency: int = 64) -> tuple[float, int]:
    import aiohttp

    gate = asyncio.Semaphore(concurrency)
    timeout = aiohttp.ClientTimeout(total=20)
    ok = 0

    async def one(session: aiohttp.ClientSession, url: str) -> None:
        nonlocal ok
        async with gate:
            try:
                async with session.get(url) as resp:
                    await resp.read()
                    ok += resp.status == 200
            except (aiohttp.ClientError, TimeoutError):
                pass

    start = time.perf_counter()
    conn = aiohttp.TCPConnector(limit=concurrency, limit_per_host=2)
    async with aiohttp.ClientSession(timeout=timeout, connector=conn) as session:
        await asyncio.gather(*(one(session, u) for u in urls))
    return time.perf_counter() - start, ok


def report(profile: str, t: tuple[Round, Round, float], r: tuple[Round, Round] | None,
           bare_s: float) -> list[str]:
    lines = [f"## latency={profile}",
             "| system | round | seconds | feeds/s | items | items/s | peak MB | notes |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    systems = [("tidings", t[:2])] + ([("reader", r)] if r else [])
    for name, pair in systems:
        for label, rnd in zip(("first", "conditional"), pair, strict=True):
            lines.append(f"| {name} | {label} | {rnd.seconds:.2f} | {rnd.feeds_per_s:.0f} | "
                         f"{rnd.items} | {rnd.items_per_s:.0f} | {rnd.peak_mb:.0f} | "
                         f"{rnd.extra} |")
    lines.append(f"| bare fetch | first | {bare_s:.2f} | {t[0].feeds / bare_s:.0f} | - | - | - | "
                 "aiohttp, no parsing |")
    if r:
        first = t[0].feeds_per_s / r[0].feeds_per_s
        cond = t[1].feeds_per_s / r[1].feeds_per_s
        lines.append(f"\nratio tidings/reader feeds/s: first {first:.1f}x, "
                     f"conditional {cond:.1f}x")
    lines.append(f"tidings first round wall time / bare fetch: {t[0].seconds / bare_s:.2f}")
    return lines


def median_round(rounds: list[Round]) -> Round:
    """The run of median wall time, noting every run's seconds and the highest peak."""
    mid = sorted(rounds, key=lambda r: r.seconds)[len(rounds) // 2]
    if len(rounds) == 1:
        return mid
    runs = ", ".join(f"{r.seconds:.2f}" for r in rounds)
    return replace(mid, peak_mb=max(r.peak_mb for r in rounds),
                   extra=f"{mid.extra}; runs {runs} s")


def paired_rounds(farm: FarmProcess, a: argparse.Namespace, env: dict[str, str]
                  ) -> tuple[tuple[Round, Round, float], tuple[Round, Round] | None]:
    """``a.pairs`` runs of each system on a freshly reset farm, alternating the order so
    that a slow spell of the shared machine does not land on one system only."""
    ours: list[tuple[Round, Round, float]] = []
    theirs: list[tuple[Round, Round]] = []
    for n in range(a.pairs):
        for system in (("tidings", "reader") if n % 2 == 0 else ("reader", "tidings")):
            farm.reset()
            if system == "tidings":
                ours.append(tidings_rounds(farm, a.feeds, env))
            elif not a.no_reader:
                theirs.append(reader_rounds(farm, a.feeds, a.reader_workers))
    by_first = sorted(ours, key=lambda t: t[0].seconds)
    index_s = by_first[len(by_first) // 2][2]  # searchable delay of the median first round
    t = (median_round([t[0] for t in ours]), median_round([t[1] for t in ours]), index_s)
    r = None if not theirs else (median_round([x[0] for x in theirs]),
                                 median_round([x[1] for x in theirs]))
    return t, r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--feeds", type=int, default=1000)
    ap.add_argument("--hosts", type=int, default=32)
    ap.add_argument("--latency", default="none,realistic")
    ap.add_argument("--reader-workers", type=int, default=32)
    ap.add_argument("--no-reader", action="store_true", help="skip the reader library")
    ap.add_argument("--repeat", type=int, default=1, help="bare-fetch repetitions (median)")
    ap.add_argument("--pairs", type=int, default=1,
                    help="tidings/reader pairs per profile, alternating who goes first "
                         "(each round reported as the median run)")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="extra environment for tidings (e.g. TIDINGS_CPU_WORKERS=-1)")
    a = ap.parse_args()
    out: list[str] = []
    for profile in a.latency.split(","):
        farm = FarmProcess(a.feeds, a.hosts, profile)
        try:
            urls = get(farm.url + "/feeds.txt").decode().split()
            bare = statistics.median(asyncio.run(bare_fetch(urls))[0] for _ in range(a.repeat))
            t, r = paired_rounds(farm, a, dict(kv.split("=", 1) for kv in a.env))
        finally:
            farm.close()
        lines = report(profile, t, r, bare)
        print("\n".join(lines), flush=True)
        out.extend(lines)


if __name__ == "__main__":
    main()
