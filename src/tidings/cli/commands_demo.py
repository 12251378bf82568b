"""``tidings demo``: try everything offline on what the run command installs.

A small sample site (an English RSS feed behind a page, a Chinese Atom feed behind
a GB2312 page, a JSON Feed) ships inside the package. The command serves it on
127.0.0.1, adds its three sources to an archive of its own (``./tidings-demo``
unless ``--data`` says otherwise, so the real archive is never touched), collects
once and then serves the reader. The site is served by the standard library's
``http.server``: it is a fixture, not a part of the product's network door.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

import click

from tidings.app import Tidings
from tidings.cli import Context, cli, handle_errors, run_async
from tidings.cli.demo_dates import DATED_SUFFIXES, shift_dates, shift_to
from tidings.errors import ConfigError
from tidings.model import Source
from tidings.settings import Settings, load_settings
from tidings.textutil import plural

#: the demo site's pages whose feeds become the demo's sources (autodiscovery finds them)
DEMO_PAGES = ("/", "/cn/", "/json/feed.json")


def demo_site_root() -> Path:
    return Path(str(resources.files("tidings").joinpath("data/demo")))


_TYPES = {".xml": "application/xml", ".json": "application/feed+json"}


class _DemoHandler(SimpleHTTPRequestHandler):
    """Static files with the types and charsets the feeds need, their dates moved to
    the present (``demo_dates``); no access log."""

    def send_head(self) -> Any:
        path = Path(self.translate_path(self.path))
        if path.is_dir() and self.path.split("?")[0].endswith("/"):
            path = path / "index.html"
        if not path.is_file() or path.suffix not in DATED_SUFFIXES or \
                (path.parent.name == "cn" and path.suffix == ".html"):
            return super().send_head()
        body = shift_dates(path.read_text("utf-8"), shift_to(datetime.now(UTC))).encode()
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def guess_type(self, path: Any) -> str:
        name = Path(str(path))
        if name.suffix == ".html":  # the Chinese page is GB2312 on purpose
            return f"text/html; charset={'gb2312' if name.parent.name == 'cn' else 'utf-8'}"
        return _TYPES.get(name.suffix) or super().guess_type(path)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the reader's own console is the one to watch."""


@contextmanager
def demo_site(port: int = 0) -> Iterator[str]:
    """Serve the sample site on 127.0.0.1 (``port`` 0: any free one); yields its base URL."""
    handler = partial(_DemoHandler, directory=str(demo_site_root()))
    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise ConfigError(f"cannot serve the demo site on port {port} ({exc.strerror}); "
                          "try --site-port 0") from None
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def demo_settings(ctx: Context, data_dir: str | None = None) -> Settings:
    """The user's settings, on the demo's own data directory, allowed to reach 127.0.0.1."""
    settings = load_settings(data_dir or ctx.data_dir or "tidings-demo",
                             config_file=ctx.config_file)
    return replace(settings, per_host_delay=0.0,
                   allow_private_hosts=(*settings.allow_private_hosts, "127.0.0.1"))


def _page_order(pages: list[str], source: Source) -> int:
    """Where the source stands in the site's order (found from a page, or that page)."""
    for n, page in enumerate(pages):
        if page in (source.url, source.site_url):
            return n
    return len(pages)


async def add_demo_sources(tidings: Tidings, base: str) -> list[Source]:
    """The site's three feeds as sources, those not added by an earlier demo run."""
    present = {u for s in tidings.sources.all() for u in (s.url, s.site_url) if u}
    return [await tidings.sources.add(base + page) for page in DEMO_PAGES
            if base + page not in present]


@cli.command()
@click.option("--site-port", default=8765, show_default=True, type=click.IntRange(0, 65535),
              help="Port of the sample site on 127.0.0.1 (0: any free one).")
@click.option("--port", type=click.IntRange(1, 65535), help="Port of the reader (default 8080).")
@click.option("--no-serve", is_flag=True, help="Set up and collect once, then exit.")
@click.option("--data", "data_dir", metavar="DIR",
              help="The demo's archive (default ./tidings-demo; `tidings --data DIR demo` "
                   "says the same).")
@click.pass_obj
@handle_errors
def demo(ctx: Context, site_port: int, port: int | None, no_serve: bool,
         data_dir: str | None) -> None:
    """Try tidings offline: a sample site, its feeds in ./tidings-demo, the reader."""
    settings = demo_settings(ctx, data_dir)
    if port:
        settings = replace(settings, port=port)
    with demo_site(site_port) as base:
        tidings = Tidings.open(settings, create=True)

        async def prepare() -> tuple[list[Source], int]:
            added = await add_demo_sources(tidings, base)
            # one source after another, in the site's order: the feeds reprint each
            # other, and the first to store a story owns it, so every demo looks alike
            created = 0
            pages = [base + page for page in DEMO_PAGES]
            for source in sorted((s for s in tidings.sources.all() if s.url.startswith(base)),
                                 key=lambda s: _page_order(pages, s)):
                created += (await tidings.collection.round([source.id])).created
            await tidings.search.index_pending()
            return added, created

        added, created = run_async(tidings, prepare())
        click.echo(f"demo site on {base}/; archive in {settings.data_dir} "
                   f"({plural(len(added), 'source')} added, "
                   f"{plural(created, 'new item')})")
        if no_serve:
            return
        from tidings.cli.commands_collect import serve_console
        from tidings.web import serve as serve_web

        serve_console()
        click.echo(f"reader on http://{settings.host}:{settings.port}/ (Ctrl-C stops both)")
        serve_web(settings)
