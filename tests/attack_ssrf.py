"""The SSRF campaign (issue 16): every entry point that fetches × every spelling of a host.

Two servers on loopback: an *allowed* one on 127.0.0.1 (the only address the
settings allow) that serves feeds, pages, articles and redirects, and a
*forbidden* one on 127.0.0.2 that counts every request it gets. Every URL the
campaign feeds tidings names the forbidden server in one of :data:`FORMS`, directly,
behind a redirect of each status, in a discovered link, an article's image, an
OPML file or a webhook. Names are answered by :class:`CampaignResolver` (a table;
numeric forms the way the C library reads them, which makes no DNS query); the
:class:`EscapeDialer` records every address the guard let through and dials only
127.0.0.1/8, so a private or link-local address is never sent a packet even if
the guard failed. Pass: the forbidden server counted 0 requests and nothing but
127.0.0.1 was dialed.

New entry points (ingest, WebSub: issue 19) are one more function in
:data:`ENTRY_POINTS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from aiohttp import web

from extract_site import article_page
from netservers import serve
from tidings.app import Tidings
from tidings.errors import TidingsError
from tidings.model import SourceKind
from tidings.net import Fetcher, ResolveError
from tidings.pipeline.crawl import CrawlLimits
from tidings.schedule.webhooks import WebhookEvent, WebhookSender
from tidings.settings import load_settings
from tidings.web import create_app

ALLOWED = "127.0.0.1"
FORBIDDEN = "127.0.0.2"
#: every spelling of the forbidden host (or of another place no request may reach)
FORMS: dict[str, str] = {
    "dotted": FORBIDDEN,
    "decimal": "2130706434",
    "hex": "0x7f000002",
    "octal": "0177.0.0.2",
    "short": "127.2",
    "mapped": "[::ffff:127.0.0.2]",
    "mapped-hex": "[::ffff:7f00:2]",
    "nat64": "[64:ff9b::7f00:2]",
    "v6-loopback": "[::1]",
    "userinfo": f"{ALLOWED}@{FORBIDDEN}",
    "trailing-dot": f"{FORBIDDEN}.",
    "name": "forbidden.test",
    "upper-case": "FORBIDDEN.TEST",
    "name-trailing-dot": "forbidden.test.",
    "localhost": "LocalHost",
    "unspecified": "0.0.0.0",
    "metadata": "metadata.test",  # a name answering 169.254.169.254
    "intranet": "intranet.test",  # a name answering 10.0.0.7
}
REDIRECTS = (301, 302, 303, 307, 308)
TABLE = {"forbidden.test": [FORBIDDEN], "forbidden.test.": [FORBIDDEN],
         f"{FORBIDDEN}.": [FORBIDDEN], "metadata.test": ["169.254.169.254"],
         "intranet.test": ["10.0.0.7"], "allowed.test": [ALLOWED]}


class CampaignResolver:
    """Names from :data:`TABLE`; numeric spellings as ``getaddrinfo`` reads them."""

    async def resolve(self, host: str, port: int) -> list[str]:
        answer = TABLE.get(host.lower())
        if answer is not None:
            return list(answer)
        try:
            infos = socket.getaddrinfo(host, port, flags=socket.AI_NUMERICHOST)
        except socket.gaierror as exc:
            raise ResolveError(f"cannot resolve {host} (not in the campaign's table)") from exc
        return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass
class EscapeDialer:
    """The guard's dial hook: what it let through; only 127.0.0.0/8 is dialed at all."""

    dialed: Counter[str] = field(default_factory=Counter)

    def __call__(self, address: str, port: int) -> None:
        self.dialed[address] += 1
        if not address.startswith("127."):
            raise OSError(f"campaign network: no route to {address}")

    @property
    def escapes(self) -> dict[str, int]:
        return {a: n for a, n in self.dialed.items() if a != ALLOWED}


@dataclass
class Campaign:
    tidings: Tidings
    allowed: str  # http://127.0.0.1:PORT
    port: int  # the forbidden server's port
    attempts: Counter[str] = field(default_factory=Counter)

    def target(self, form: str, path: str = "/feed.xml") -> str:
        return f"http://{FORMS[form]}:{self.port}{path}"

    async def expect_refusal(self, entry: str, call: Awaitable[Any]) -> None:
        self.attempts[entry] += 1
        with contextlib.suppress(TidingsError):  # a refusal, in one line; a bug propagates
            await call


def _allowed_app(forbidden_port: int) -> web.Application:
    def spelled(request: web.Request, path: str) -> str:
        return f"http://{FORMS[request.match_info['form']]}:{forbidden_port}{path}"

    async def redirect(request: web.Request) -> web.Response:
        status = int(request.match_info["status"])
        return web.Response(status=status, headers={"Location": spelled(request, "/secret")})

    async def page(request: web.Request) -> web.Response:
        link = spelled(request, "/feed.xml")
        return web.Response(content_type="text/html", text=(
            f'<html><head><link rel="alternate" type="application/rss+xml" href="{link}">'
            f'</head><body><a href="{link}">feed</a></body></html>'))

    async def article(request: web.Request) -> web.Response:
        images = tuple(spelled(request, f"/img{n}.png") for n in range(2))
        return web.Response(content_type="text/html",
                            text=article_page(3, title="Gates open", images=images))

    async def feed(request: web.Request) -> web.Response:
        base = f"http://{request.host}"
        links = [f"http://{h}:{forbidden_port}/story" for h in FORMS.values()]
        links += [f"{base}/article/{form}" for form in FORMS]
        # no description: a body to fetch from the entry's page
        items = "".join(f"<item><title>Story {n}</title><link>{link}</link>"
                        f"<guid>{link}</guid></item>" for n, link in enumerate(links))
        return web.Response(content_type="application/rss+xml", text=(
            f"<?xml version='1.0'?><rss version='2.0'><channel><title>Allowed</title>"
            f"<link>{base}/</link>{items}</channel></rss>"))

    async def blogroll(request: web.Request) -> web.Response:
        """A home page whose blogroll names the forbidden host in every spelling."""
        links = "".join(f'<li><a href="http://{h}:{forbidden_port}/" target="_blank">'
                        f"Friend {n}</a></li>" for n, h in enumerate(FORMS.values()))
        return web.Response(content_type="text/html", text=(
            "<html><head><title>A blog</title></head><body><main><p>Notes on the weather, "
            "written daily by one person who likes clouds.</p></main><aside><h2>Blogroll</h2>"
            f"<ul>{links}</ul></aside></body></html>"))

    app = web.Application()
    app.add_routes([web.get("/", blogroll), web.get("/redirect/{status}/{form}", redirect),
                    web.get("/page/{form}", page), web.get("/article/{form}", article),
                    web.get("/feed.xml", feed)])
    return app


def _forbidden_app(hits: Counter[str]) -> web.Application:
    async def anything(request: web.Request) -> web.Response:
        hits[request.path] += 1
        return web.Response(content_type="application/rss+xml", text=(
            "<rss version='2.0'><channel><title>LEAKED</title></channel></rss>"))

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", anything)
    return app


# ----------------------------------------------------------------- entry points

async def _discover(c: Campaign) -> None:
    for form in FORMS:
        await c.expect_refusal("discover", c.tidings.sources.discover(c.target(form, "/")))
        await c.expect_refusal("discover (linked feed)",
                               c.tidings.sources.discover(f"{c.allowed}/page/{form}"))


async def _add(c: Campaign) -> None:
    for form in FORMS:
        await c.expect_refusal("add", c.tidings.sources.add(c.target(form)))


async def _opml_and_collect(c: Campaign) -> None:
    outlines = [c.target(form, f"/opml/{form}.xml") for form in FORMS]
    outlines += [f"{c.allowed}/redirect/{status}/{form}" for status in REDIRECTS
                 for form in FORMS]
    body = "".join(f'<outline type="rss" text="x" xmlUrl="{u.replace("&", "&amp;")}"/>'
                   for u in outlines)
    await c.tidings.transfer.import_opml(f"<opml><body>{body}</body></opml>".encode())
    report = await c.tidings.collection.round(extract=False)
    c.attempts["OPML import + collect"] += len(FORMS)
    c.attempts["collect: redirects 301/302/303/307/308"] += len(REDIRECTS) * len(FORMS)
    assert report.failed >= len(outlines) - 1, report.results  # 1: the one allowed by name


async def _extraction(c: Campaign) -> None:
    """Items linking to the forbidden host (pages), and allowed articles whose images are
    on it (image localization)."""
    await c.tidings.sources.create(f"{c.allowed}/feed.xml", source_id="allowed")
    await c.tidings.collection.round(["allowed"], extract=False)
    report = await c.tidings.collection.extract_pending(limit=10_000)
    c.attempts["extraction"] += len(FORMS)
    c.attempts["image localization"] += 2 * len(FORMS)
    assert report.tried >= len(FORMS) and report.ok >= len(FORMS), report  # pages came


async def _doctor(c: Campaign) -> None:
    for source in c.tidings.sources.all():
        if f":{c.port}/opml/" in source.url:
            await c.expect_refusal("doctor", c.tidings.probes.doctor(source.id))


async def _webhooks(c: Campaign) -> None:
    sender = WebhookSender(c.tidings.fetcher, [c.target(form, "/hook") for form in FORMS],
                           delays=(0.0,))
    sender.start()
    sender.submit(WebhookEvent("items", {"items": [{"id": 1}]}))
    await sender.aclose(timeout=20)
    c.attempts["webhooks"] += len(FORMS)


async def _web_add_page(c: Campaign) -> None:
    app = create_app(c.tidings, c.tidings.settings, page_ttl=0)
    transport = httpx.ASGITransport(app=app, client=(ALLOWED, 5000))
    async with httpx.AsyncClient(transport=transport, base_url=f"http://{ALLOWED}") as web_:
        page = await web_.get("/add")
        token = re.search(r'<meta name="csrf" content="([^"]+)"', page.text)
        assert token is not None
        for form in FORMS:
            answer = await web_.post("/add/find", data={"url": c.target(form, "/"),
                                                        "csrf": token.group(1)})
            assert answer.status_code < 500
            c.attempts["web add page"] += 1


async def _preview(c: Campaign) -> None:
    """Page rules tried before a source exists (issue 17) fetch through the same guard."""
    for form in FORMS:
        for kind, config in ((SourceKind("web_list"), {"item": "article"}),
                             (SourceKind("json_list"), {"items_path": "items", "url": "url"})):
            c.attempts["preview"] += 1
            with contextlib.suppress(TidingsError):
                report = await c.tidings.probes.preview(kind, c.target(form, "/list"), config)
                assert report.error, report  # refused, so the run fails with a reason


async def _crawl(c: Campaign) -> None:
    """Crawl seeds on the forbidden host, and an allowed blog whose blogroll names it in
    every spelling (issue 20): robots.txt, home pages and feed probes all refused."""
    seeds = [c.target(form, "/") for form in FORMS]
    first = await c.tidings.crawls.start(seeds, CrawlLimits(max_depth=1, max_sites=100))
    counts = await c.tidings.crawls.run(first)
    assert counts.queued == counts.visiting == counts.done == 0, counts
    c.attempts["crawl seeds"] += len(FORMS)
    second = await c.tidings.crawls.start([f"{c.allowed}/"], CrawlLimits(max_depth=1))
    counts = await c.tidings.crawls.run(second)
    # the blogroll was read and its sites queued, then each refused with its reason
    refused = [s for s in c.tidings.crawls.troubles(second) if s.depth == 1]
    assert counts.done == 1 and len(refused) >= 5, (counts, refused)
    c.attempts["crawl blogroll links"] += len(FORMS)


ENTRY_POINTS: dict[str, Callable[[Campaign], Awaitable[None]]] = {
    "discover": _discover,
    "add": _add,
    "OPML import, collect, redirects": _opml_and_collect,
    "extraction and images": _extraction,
    "doctor": _doctor,
    "webhooks": _webhooks,
    "web add page": _web_add_page,
    "preview": _preview,
    "crawl": _crawl,
}


async def campaign(data_dir: Path) -> dict[str, Any]:
    """Run every entry point against every form; a JSON-able summary."""
    settings = load_settings(data_dir, env={}, overrides={
        "allow_private_hosts": ALLOWED, "per_host_delay": 0, "http_timeout": 5,
        "initial_backfill_limit": 1000, "initial_backfill_months": 1200})
    hits: Counter[str] = Counter()
    dialer = EscapeDialer()
    async with serve(_forbidden_app(hits), host=FORBIDDEN) as forbidden, \
            serve(_allowed_app(int(forbidden.rsplit(":", 1)[1]))) as allowed:
        tid = Tidings.open(settings, create=True)
        tid.use_fetcher(Fetcher(settings, resolver=CampaignResolver(), dial_hook=dialer))
        c = Campaign(tid, allowed, int(forbidden.rsplit(":", 1)[1]))
        try:
            for run in ENTRY_POINTS.values():
                await run(c)
        finally:
            await tid.aclose()
        leaked = sum(hits.values())
        # the control: the counter does count what reaches the forbidden server
        control = load_settings(data_dir, env={}, overrides={"allow_private_hosts": FORBIDDEN})
        async with Fetcher(control) as fetcher:
            await fetcher.fetch(f"{forbidden}/control")
    return {"attempts": dict(c.attempts), "total": sum(c.attempts.values()),
            "forbidden_hits": leaked, "control_hits": hits["/control"],
            "escapes": dialer.escapes, "allowed_dials": dialer.dialed[ALLOWED],
            "forms": len(FORMS)}


def main() -> None:
    """``python tests/attack_ssrf.py DIR``: the campaign in this process, JSON out (the
    test runs it so inside ``unshare -n``)."""
    import json
    import sys

    print(json.dumps(asyncio.run(campaign(Path(sys.argv[1])))))


if __name__ == "__main__":
    main()
