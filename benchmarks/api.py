"""Push ingest throughput, and Google Reader ``stream/contents`` latency on a big archive.

1. Ingest: a fresh archive served by a child process (uvicorn, as ``tidings serve``
   runs it), 8 client threads each posting batches of 50 new items to
   ``/api/ingest/items`` (the rate limit lifted for the run); items stored per
   second over the whole run. Target: at least 2,000 items/s.
2. Latency on the 200,000-item archive of ``benchmarks/web.py`` (built once, kept):
   ``reader/api/0/stream/contents`` with ``n=1000`` at random depths (continuations
   taken from the archive), against the JSON API's ``/api/v1/items`` at its largest
   page (``limit=200``) at the same depths, and against the ceiling: a constant
   answer of a stream page's size behind the same authentication (what sending and
   receiving that many bytes costs this server and this client). Same server, same
   run, one client, the three asked in turn at each depth; medians, 99th
   percentiles, and the CPU time per answer of the server and of the client.
   Target: stream/contents p99 below 150 ms.

    .venv/bin/python benchmarks/api.py [--items 200000] [--requests 200] [--batches 40]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import NamedTuple

import httpx

from web import prepare
from webload import free_port, wait_healthy

CLIENTS = 8
BATCH = 50
INGEST_TARGET = 2000.0
P99_TARGET_MS = 150.0
STATIC = "/bench/static"
GC = "/bench/gc"
STREAM = "/api/greader/reader/api/0/stream/contents/user/-/state/com.google/reading-list"
GREADER = "greader stream/contents n=1000"
CEILING = "ceiling: static answer, same size"
API = "json api /api/v1/items limit=200"


def serve(data: Path, port: int) -> None:
    import uvicorn
    from fastapi import Depends, Query
    from starlette.responses import Response

    from tidings.app import Tidings
    from tidings.settings import load_settings
    from tidings.web import create_app, greader
    from tidings.web.server import settle_heap

    settings = load_settings(data, env={"TIDINGS_INGEST_PER_MINUTE": "100000000"})
    tid = Tidings.open(settings, create=True)
    app = create_app(tid, settings, page_ttl=0)
    bodies: dict[int, bytes] = {}

    async def static(size: int = Query(ge=1, le=10**8)) -> Response:
        """The ceiling: an answer of a page's size, no work behind it (same server,
        same authentication and routing)."""
        body = bodies.setdefault(size, b'"' + b"x" * (size - 2) + b'"')
        return Response(body, media_type="application/json")

    app.app.add_api_route(STATIC, static, dependencies=[Depends(greader.client)])  # type: ignore[attr-defined]
    settle_heap()  # as `tidings serve` does
    pauses: list[float] = []  # full garbage collections: -start, end, -start, end, ...
    gc.callbacks.append(lambda phase, info: info["generation"] == 2 and pauses.append(
        time.perf_counter() * (-1 if phase == "start" else 1)))

    async def collections() -> dict[str, float]:
        full = [pauses[i] + pauses[i + 1] for i in range(0, len(pauses) - 1, 2)]
        return {"full": len(full), "longest_ms": max(full, default=0) * 1000,
                "total_ms": sum(full) * 1000}

    app.app.add_api_route(GC, collections)  # type: ignore[attr-defined]
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def start(data: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(data), "--port",
                             str(port)])
    url = f"http://127.0.0.1:{port}"
    wait_healthy(proc, url, timeout=120)
    return proc, url


def make_token(data: Path) -> str:
    """An API token, made as the settings page makes one (before the server opens it)."""
    import asyncio

    from tidings.app import Tidings
    from tidings.settings import load_settings
    from tidings.web import auth

    tid = Tidings.open(load_settings(data, env={}), create=True)
    token_id, value, digest = auth.new_token()
    asyncio.run(tid.tokens.add(token_id, "bench", digest))
    tid.close()
    return value


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def ingest(batches: int) -> tuple[float, int]:
    """Items stored per second by 8 clients, and how many were stored."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        token = make_token(data)
        proc, url = start(data)
        stored = [0] * CLIENTS
        try:
            def client(n: int) -> None:
                with httpx.Client(base_url=url, timeout=60,
                                  headers={"Authorization": f"Bearer {token}"}) as http:
                    for b in range(batches):
                        items = [{"title": f"Pushed {n}-{b}-{i} about benchmarks",
                                  "url": f"https://push.example/{n}/{b}/{i}",
                                  "content_html": f"<p>Body {n} {b} {i} " + "text " * 60
                                  + "</p>"} for i in range(BATCH)]
                        answer = http.post("/api/ingest/items",
                                           json={"source_id": f"bench-{n % 2}", "items": items})
                        answer.raise_for_status()
                        stored[n] += answer.json()["stored"]

            threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
            started = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.monotonic() - started
        finally:
            stop(proc)
    return sum(stored) / elapsed, sum(stored)


def latency(data: Path, requests: int) -> dict[str, Figures]:
    """Per endpoint: p50, p99 (ms), items per answer, the server's CPU time per counted
    answer (ms; it hardly depends on how busy the machine is, the latencies do) and the
    client's. The three endpoints are asked in turn at each depth, so a busy moment of
    the machine falls on all three alike; the ceiling is a constant answer of a stream
    page's size behind the same authentication: what serving and receiving that many
    bytes costs this server and this client in this run."""
    token = make_token(data)
    proc, url = start(data)
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            auth = {"greader": {"Authorization": f"GoogleLogin auth={token}"},
                    "bearer": {"Authorization": f"Bearer {token}"}}
            depths = _depths(http, auth["greader"], requests)
            times: dict[str, list[float]] = {n: [] for n in (GREADER, CEILING, API)}
            counts: dict[str, list[int]] = {n: [] for n in times}
            cpu = {n: [0.0, 0.0] for n in times}  # server, client
            sizes: list[int] = []
            for i, depth in enumerate([None, *depths[:20], *depths]):
                for name, took in times.items():
                    before = _cpu_seconds(proc.pid)
                    path, params, headers = _request(name, depth, sizes, auth)
                    own, started = time.thread_time(), time.perf_counter()
                    answer = http.get(path, params=params, headers=headers)
                    ms = (time.perf_counter() - started) * 1000
                    own = time.thread_time() - own
                    answer.raise_for_status()
                    if name == GREADER:
                        sizes.append(len(answer.content))
                    if i > 20:  # the first 21 warm the caches, uncounted
                        cpu[name][0] += _cpu_seconds(proc.pid) - before
                        cpu[name][1] += own
                        took.append(ms)
                        counts[name].append(len(answer.json()["items"]) if name != CEILING else 0)
            gcs = http.get(GC).json()
            print(f"server: {gcs['full']} full garbage collections over the run, longest "
                  f"{gcs['longest_ms']:.1f} ms, {gcs['total_ms']:.0f} ms in all", flush=True)
    finally:
        stop(proc)
    return {name: Figures(statistics.median(t), _p99(t), int(statistics.median(counts[name])),
                          cpu[name][0] * 1000 / len(t), cpu[name][1] * 1000 / len(t))
            for name, t in times.items()}


def _request(name: str, depth: str | None, sizes: list[int], auth: dict[str, dict[str, str]]
             ) -> tuple[str, dict[str, str | int], dict[str, str]]:
    """Path, parameters and headers of one endpoint's request at one depth."""
    if name == GREADER:
        return STREAM, {"n": 1000, **({"c": depth} if depth else {})}, auth["greader"]
    if name == API:
        return "/api/v1/items", {"limit": 200, **({"before": depth[1:]} if depth else {})}, \
            auth["bearer"]
    return STATIC, {"size": int(statistics.median(sizes))}, auth["greader"]


class Figures(NamedTuple):
    p50: float
    p99: float
    items: int
    server_cpu_ms: float
    client_cpu_ms: float


def _depths(http: httpx.Client, headers: dict[str, str], count: int) -> list[str]:
    """Continuations at random depths of the reading list (one id walk, newest first)."""
    refs: list[dict[str, str]] = []
    cont = None
    while len(refs) < 150_000:
        params: dict[str, str | int] = {"s": "user/-/state/com.google/reading-list", "n": 1000}
        if cont:
            params["c"] = cont
        page = http.get("/api/greader/reader/api/0/stream/items/ids", params=params,
                        headers=headers).json()
        refs += page["itemRefs"]
        cont = page.get("continuation")
        if not cont:
            break
    rng = random.Random(5)
    picks = [refs[rng.randrange(len(refs))] for _ in range(count)]
    return [f"n{r['timestampUsec']}.{r['id']}" for r in picks]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--data", default=str(Path(tempfile.gettempdir()) / "tidings-bench-web"))
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--batches", type=int, default=40, help="requests per ingest client")
    parser.add_argument("--serve")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if args.serve:
        serve(Path(args.serve), args.port)
        return
    rate, stored = ingest(args.batches)
    print(f"ingest: {stored} items by {CLIENTS} clients, {BATCH} per request: "
          f"{rate:.0f} items/s (target >= {INGEST_TARGET:.0f}: "
          f"{'met' if rate >= INGEST_TARGET else 'NOT met'})", flush=True)
    data = Path(args.data)
    prepare(data, args.items)
    load = os.getloadavg()[0]
    found = latency(data, args.requests)
    print(f"\n{args.items} items, {args.requests} requests each, one client, "
          f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"{'endpoint':36} {'items':>6} {'p50 ms':>8} {'p99 ms':>8} {'µs/item p50':>12} "
          f"{'server CPU ms':>14} {'client CPU ms':>14}")
    for name, f in found.items():
        print(f"{name:36} {f.items:6d} {f.p50:8.1f} {f.p99:8.1f} "
              f"{f.p50 * 1000 / max(f.items, 1) if f.items else 0:12.0f} "
              f"{f.server_cpu_ms:14.1f} {f.client_cpu_ms:14.1f}")
    gr, ceiling, api = found[GREADER], found[CEILING], found[API]
    print(f"ratio per item (greader / json api, p50): "
          f"{(gr.p50 / max(gr.items, 1)) / (api.p50 / max(api.items, 1)):.2f}")
    print(f"ratio of answers (greader n=1000 / json api limit=200): p50 {gr.p50 / api.p50:.2f}, "
          f"p99 {gr.p99 / api.p99:.2f}")
    print(f"stream/contents over the same-size ceiling: p50 {gr.p50 / ceiling.p50:.2f}, "
          f"p99 {gr.p99 / ceiling.p99:.2f}")
    print(f"target: stream/contents p99 {gr.p99:.1f} < {P99_TARGET_MS:.0f} ms: "
          f"{'met' if gr.p99 < P99_TARGET_MS else 'NOT met'}")

if __name__ == "__main__":
    main()
