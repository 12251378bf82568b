"""The blogroll crawl alone, with what ``crawl.py`` does not show: where its CPU goes.

One crawl of ``benchmarks/crawl.py``'s synthetic web (same pages, same settings,
32 workers), then per site: the process's CPU milliseconds, the event loop
thread's and the writer thread's, the writer steps and the claims that found
nothing. For instruction counts, which a busy machine does not disturb, serve the
web from one process and count the crawl's with callgrind in another (subtract a
run with ``--sites 0``, which only imports):

    .venv/bin/python benchmarks/crawl_steps.py --sites 1000
    .venv/bin/python benchmarks/crawl_steps.py --serve 300      # prints the port
    valgrind --tool=callgrind .venv/bin/python benchmarks/crawl_steps.py --sites 300 --port P
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import crawl as web
import tidings.pipeline.crawl as pipeline
from tidings.app import Tidings
from tidings.net import Fetcher
from tidings.settings import load_settings
from tidings.store.writer import Writer


class Tally:
    """Writer steps, and claim steps that found no site (those of a worker that had no
    visit to end apart), counted as they run."""

    def __init__(self) -> None:
        self.steps = 0
        self.empty_claims = 0
        self.empty_alone = 0

    def install(self) -> None:
        submit = Writer._submit
        claim = pipeline._finish_and_claim

        def counted_submit(writer: Writer, call: Any) -> Any:
            self.steps += 1
            return submit(writer, call)

        def counted_claim(*args: Any) -> Any:
            result = claim(*args)
            # main's code before 8844827 returns the site alone
            empty = (result[1] if isinstance(result, tuple) else result) is None
            self.empty_claims += empty
            self.empty_alone += empty and args[2] is None
            return result

        Writer._submit = counted_submit  # type: ignore[method-assign]
        pipeline._finish_and_claim = counted_claim


def _thread_cpu(name: str) -> float:
    for thread in threading.enumerate():
        if thread.name == name and thread.ident is not None:
            return time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
    return 0.0


async def crawl(port: int, sites: int, tally: Tally) -> None:
    depth = web.depth_needed(web.graph(sites))
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(Path(tmp), env={}, overrides={
            "allow_private_hosts": "127.0.0.1", "per_host_delay": 0,
            "per_host_concurrency": 4})
        tidings = Tidings.open(settings, create=True)
        fetcher = Fetcher(settings, resolver=web.LoopbackResolver())
        env = replace(tidings.pipeline_env(), fetcher=fetcher)
        try:
            cpu, loop = time.process_time(), time.thread_time()
            crawl_id = await pipeline.start_crawl(env, [f"http://{web.host(0)}:{port}/"],
                                                  pipeline.CrawlLimits(depth, sites + 10,
                                                                       10 * sites))
            counts = await pipeline.run_crawl(env, crawl_id, workers=web.WORKERS)
            cpu, loop = time.process_time() - cpu, time.thread_time() - loop
            writer = _thread_cpu("tidings-writer")
        finally:
            await fetcher.aclose()
            await tidings.aclose()
    assert counts.feeds == sites, f"found {counts.feeds} of {sites} feeds"
    print(f"sites {sites}: CPU ms/site {cpu * 1000 / sites:.2f} (event loop "
          f"{loop * 1000 / sites:.2f}, writer thread {writer * 1000 / sites:.2f}), writer steps "
          f"a site {tally.steps / sites:.2f}, claims that found nothing {tally.empty_claims} "
          f"({tally.empty_alone} with no visit to end)")


def main(args: argparse.Namespace) -> None:
    if args.port is not None:
        if args.sites:
            tally = Tally()
            tally.install()
            asyncio.run(crawl(args.port, args.sites, tally))
        return
    sites = args.serve or args.sites
    ports: multiprocessing.SimpleQueue[int] = multiprocessing.SimpleQueue()
    server = multiprocessing.Process(target=web._serve, args=(sites, ports), daemon=True)
    server.start()
    port = ports.get()
    try:
        if args.serve:
            print(port, flush=True)
            server.join()
        else:
            main(argparse.Namespace(port=port, sites=sites, serve=None))
    finally:
        server.kill()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", type=int, default=1000)
    parser.add_argument("--port", type=int, help="crawl a web served elsewhere (--serve)")
    parser.add_argument("--serve", type=int, metavar="SITES", help="only serve the web")
    main(parser.parse_args())
