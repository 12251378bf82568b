"""``/media/…``: the images extraction copied to ``DATA_DIR/media`` (R-EXTRACT-4), or
into the database in cluster mode (``pipeline/media.py``), so every web node serves them.

Files are named by the SHA-256 of their bytes (``extract/images.py``), so a
name never changes meaning: answers are cached for a year as immutable. The
path must be exactly ``<h[:2]>/<h[2:4]>/<h>.<ext>`` (64 hex digits, a raster
extension) before the disk is touched: no other file, no directory listing,
no ``..``. The type sent is the one the bytes say (``filetype``), and only a
raster image is served at all: a file that is not one is a 404, so nothing in
the media folder can ever be rendered as a page of ours.
"""

from __future__ import annotations

import re
from pathlib import Path

import filetype
from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from tidings.errors import NotFoundError
from tidings.web.context import require_reader, web_state

router = APIRouter(include_in_schema=False)

_NAME = re.compile(r"([0-9a-f]{64})\.(jpg|png|gif|webp|avif|bmp|ico)")
_RASTER = {"image/jpeg", "image/png", "image/gif", "image/webp", "image/avif", "image/bmp",
           "image/x-icon", "image/vnd.microsoft.icon"}
#: a stored image is at most 5 MiB (extract/images.py); anything larger is not ours
_MAX_BYTES = 8 * 1024 * 1024
HEADERS = {
    "Cache-Control": "public, max-age=31536000, immutable",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "X-Content-Type-Options": "nosniff",
}


def _read(path: Path) -> bytes | None:
    try:
        if not path.is_file() or path.stat().st_size > _MAX_BYTES:
            return None
        return path.read_bytes()
    except OSError:
        return None


@router.get("/media/{first}/{second}/{name}")
async def media(request: Request, first: str, second: str, name: str) -> Response:
    require_reader(request)
    match = _NAME.fullmatch(name)
    if match is None or first != match.group(1)[:2] or second != match.group(1)[2:4]:
        raise NotFoundError("no such image")
    st = web_state(request)
    body = await run_in_threadpool(_read, st.settings.data_dir / "media" / first / second / name)
    if body is None:  # a cluster's images are in the database (pipeline/media.py)
        body = await run_in_threadpool(st.tidings.items.media, f"{first}/{second}/{name}")
        body = body if body is not None and len(body) <= _MAX_BYTES else None
    kind = filetype.guess_mime(body) if body else None
    if body is None or kind not in _RASTER:
        raise NotFoundError("no such image")
    return Response(body, media_type=kind, headers=HEADERS)
