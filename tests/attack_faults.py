"""The hostile publisher of the fault campaign (issue 16): one aiohttp app, one route each.

Every route misbehaves in one way a feed server can (hangs, drips, bombs,
endless streams, redirect loops, lying charsets, 5xx, 429 with an absurd
Retry-After, entity expansion, XXE, deep nesting, huge single-line documents,
invalid UTF-8, huge fields). :data:`FAULTS` maps each route to what a round
must make of it: ``failed`` (with a one-line reason containing the words
given) or ``ok``.
"""

from __future__ import annotations

import asyncio
import zlib
from contextlib import suppress

from aiohttp import web

RSS = "application/rss+xml"
HANG_S = 16.0
_ITEM = "<item><title>{title}</title><link>http://x.example/{n}</link><guid>g{n}</guid></item>"


def rss(*items: str, head: str = "<?xml version='1.0' encoding='utf-8'?>") -> bytes:
    body = "".join(items) or _ITEM.format(title="Fine", n=0)
    return f"{head}<rss version='2.0'><channel><title>F</title>{body}</channel></rss>".encode()




def _bomb(wbits: int, megabytes: int = 100) -> bytes:
    """``megabytes`` of blanks behind a feed's first bytes, compressed (about 1/1000)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    parts = [packer.compress(b"<rss>")]
    block = b" " * 1024 * 1024
    parts += [packer.compress(block) for _ in range(megabytes)]
    return b"".join([*parts, packer.flush()])


_BOMB = _bomb(16 + zlib.MAX_WBITS)  # gzip
_DEFLATE_BOMB = _bomb(zlib.MAX_WBITS)  # zlib-wrapped deflate, as servers send it
_LAUGHS = ("<?xml version='1.0'?><!DOCTYPE r [<!ENTITY a 'hahahahahahahahahaha'>"
           + "".join(f"<!ENTITY {c} '{('&' + p + ';') * 10}'>"
                     for p, c in zip("abcdefgh", "bcdefghi", strict=True))
           + "]><rss version='2.0'><channel><title>&i;</title>"
           + _ITEM.format(title="&i;", n=1) + "</channel></rss>").encode()
_XXE = ("<?xml version='1.0'?><!DOCTYPE r [<!ENTITY x SYSTEM 'file:///etc/passwd'>]>"
        "<rss version='2.0'><channel><title>x</title>"
        + _ITEM.format(title="leak &x; end", n=2) + "</channel></rss>").encode()
_DEEP_XML = rss(_ITEM.format(title="deep", n=3) + "<x>" * 50_000 + "</x>" * 50_000)
_DEEP_JSON = (b'{"version":"https://jsonfeed.org/version/1.1","title":"j","items":'
              + b"[" * 100_000 + b"]" * 100_000 + b"}")
_HUGE_LINE = rss(_ITEM.format(title="T" * 6_000_000, n=4)).replace(b"\n", b"")
_FIFTY_MB = rss(_ITEM.format(title="T" * 50_000_000, n=5))
_INVALID_UTF8 = rss(_ITEM.format(title="bad", n=6)).replace(b"bad", b"caf\xe9 \xff\xfe\xc3 ok")
_LYING = rss(_ITEM.format(title="Привет", n=7), head="<?xml version='1.0' encoding='x-nonsense'?>")
_HUGE_FIELDS = rss(*(_ITEM.format(title=f"{'W' * 200_000} {n}", n=10 + n) for n in range(20)))

#: route -> (expected outcome, words its one-line reason holds)
FAULTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "hang": ("failed", ("no complete answer",)),
    "drip": ("failed", ("no complete answer",)),
    "gzip-bomb": ("failed", ("body larger than",)),
    "deflate-bomb": ("failed", ("body larger than",)),
    "endless": ("failed", ("body larger than",)),
    "redirect-loop": ("failed", ("redirect",)),
    "redirect-chain": ("failed", ("redirects",)),
    "e500": ("failed", ("500",)),
    "e503": ("failed", ("503",)),
    "e429": ("failed", ("429",)),
    "laughs": ("ok", ()),  # libxml2 refuses the expansion; recovered with the entity as text
    "xxe": ("ok", ()),
    "deep-xml": ("ok", ()),
    "deep-json": ("failed", ("nested too deeply",)),
    "huge-line": ("ok", ()),
    "fifty-mb": ("failed", ("body larger than",)),
    "invalid-utf8": ("ok", ()),
    "lying-charset": ("ok", ()),
    "huge-fields": ("ok", ()),
    "empty": ("failed", ("empty",)),
    "garbage": ("failed", ("not a feed",)),
}


async def _stream(request: web.Request, chunk: bytes, pause: float, total: int,
                  ) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": RSS})
    await response.prepare(request)
    sent = 0
    with suppress(ConnectionError, asyncio.CancelledError):
        while sent < total:
            await response.write(chunk)
            sent += len(chunk)
            if pause:
                await asyncio.sleep(pause)
    return response


def fault_app() -> web.Application:
    # both outlast the client's 8 s budget, and end soon after, so the server can stop
    async def hang(request: web.Request) -> web.Response:
        await asyncio.sleep(HANG_S)
        return web.Response()

    async def drip(request: web.Request) -> web.StreamResponse:
        return await _stream(request, b"<", 0.3, int(HANG_S / 0.3))

    async def endless(request: web.Request) -> web.StreamResponse:  # "10 GiB"
        return await _stream(request, b"<item>" * 10_000, 0.0, 10 * 1024**3)

    def fixed(body: bytes, status: int = 200, **headers: str) -> web.Response:
        return web.Response(body=body, status=status, headers={"Content-Type": RSS, **headers})

    async def answer(request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name == "hang":
            return await hang(request)
        if name == "drip":
            return await drip(request)
        if name == "endless":
            return await endless(request)
        if name == "redirect-loop":
            return web.Response(status=302, headers={"Location": "/f/redirect-loop2"})
        if name == "redirect-loop2":
            return web.Response(status=301, headers={"Location": "/f/redirect-loop"})
        if name.startswith("redirect-chain"):
            return web.Response(status=307, headers={"Location": f"/f/{name}x"})
        bodies = {
            "gzip-bomb": fixed(_BOMB, **{"Content-Encoding": "gzip"}),
            "deflate-bomb": fixed(_DEFLATE_BOMB, **{"Content-Encoding": "deflate"}),
            "e500": fixed(b"oops", 500), "e503": fixed(b"busy", 503, **{"Retry-After": "120"}),
            "e429": fixed(b"slow down", 429, **{"Retry-After": "9" * 20}),
            "laughs": fixed(_LAUGHS), "xxe": fixed(_XXE), "deep-xml": fixed(_DEEP_XML),
            "deep-json": fixed(_DEEP_JSON, **{"Content-Type": "application/feed+json"}),
            "huge-line": fixed(_HUGE_LINE), "fifty-mb": fixed(_FIFTY_MB),
            "invalid-utf8": fixed(_INVALID_UTF8), "lying-charset": fixed(_LYING),
            "huge-fields": fixed(_HUGE_FIELDS), "empty": fixed(b""),
            "garbage": fixed(b"\x00\x01\x02 not xml at all \xff" * 100),
        }
        return bodies[name]

    app = web.Application()
    app.router.add_get("/f/{name}", answer)
    return app


def fault_opml(base: str) -> bytes:
    outlines = "".join(f'<outline type="rss" text="{n}" title="{n}" xmlUrl="{base}/f/{n}"/>'
                       for n in FAULTS)
    return f"<opml version='2.0'><body>{outlines}</body></opml>".encode()
