"""Serve the offline demo site on 127.0.0.1 so the whole flow can be tried without internet.

    python tests/demo/serve.py            # prints the URLs, serves until Ctrl-C
    export TIDINGS_ALLOW_PRIVATE_HOSTS=127.0.0.1
    tidings init --empty && tidings add http://127.0.0.1:PORT/ && tidings collect --once

The same site is used by tests/test_demo.py.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from aiohttp import web

SITE = Path(__file__).resolve().parent / "site"
TYPES = {".xml": "application/xml", ".json": "application/feed+json", ".html": "text/html"}


def make_app() -> web.Application:
    async def handle(request: web.Request) -> web.StreamResponse:
        rel = request.match_info["path"] or "index.html"
        path = (SITE / rel).resolve()
        if path.is_dir():
            path = path / "index.html"
        if SITE not in path.parents or not path.is_file():
            return web.Response(status=404, text="not found")
        charset = "gb2312" if path.parent.name == "cn" and path.suffix == ".html" else "utf-8"
        ctype = TYPES.get(path.suffix, "application/octet-stream")
        return web.Response(body=path.read_bytes(), content_type=ctype, charset=charset)

    app = web.Application()
    app.router.add_get("/{path:.*}", handle)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    print(f"demo site: http://127.0.0.1:{args.port}/  (Chinese: /cn/, JSON Feed: /json/feed.json)")
    print("set TIDINGS_ALLOW_PRIVATE_HOSTS=127.0.0.1 so tidings may fetch from it")
    web.run_app(make_app(), host="127.0.0.1", port=args.port, print=None)


if __name__ == "__main__":
    main()
