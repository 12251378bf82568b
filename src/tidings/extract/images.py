"""Image localization (R-EXTRACT-4): copy an article's images to disk at extraction.

Signed image URLs expire and hotlinking leaks the reader to third parties, so
every image is fetched once, through the guarded fetcher, with the article page
as Referer (many CDNs refuse anything else), and stored content-addressed:
``<image_dir>/<h[:2]>/<h[2:4]>/<h>.<ext>`` where ``h`` is the SHA-256 of the
bytes. ``src`` is rewritten to ``<url_prefix><h[:2]>/<h[2:4]>/<h>.<ext>`` for
the web server to serve; the original URL stays in ``data-original-src`` and
``srcset`` goes. An image that cannot be had gets an empty ``src``: it never
fails the article. Where the bytes go is the caller's (a :data:`Keep`): a folder
on this machine, or - in cluster mode, where another machine serves the page -
the archive's database (``pipeline/media.py``); extraction never touches storage.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import lxml.html
from lxml import etree

from tidings.errors import FetchError
from tidings.net import Fetcher

MAX_IMAGES = 12
MAX_IMAGE_BYTES = 5 * 1024 * 1024

# Raster types only: SVG is a document that can carry script.
_EXTENSIONS = {
    "image/jpeg": "jpg",
    "image/pjpeg": "jpg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
    "image/avif": "avif",
    "image/bmp": "bmp",
    "image/x-icon": "ico",
    "image/vnd.microsoft.icon": "ico",
}
_ACCEPT = "image/avif,image/webp,image/png,image/jpeg,image/gif;q=0.9,*/*;q=0.1"


@dataclass(frozen=True, slots=True)
class ImageResult:
    html: str  # the rewritten HTML
    stored: tuple[str, ...]  # relative paths under image_dir, in order of appearance
    failed: tuple[tuple[str, str], ...]  # (image URL, reason) for every image not stored


#: keeps an image's bytes (its raster extension given) and returns its name
Keep = Callable[[bytes, str], Awaitable[str]]


def media_name(content: bytes, ext: str) -> str:
    """The content address an image is kept and served under."""
    digest = hashlib.sha256(content).hexdigest()
    return f"{digest[:2]}/{digest[2:4]}/{digest}.{ext}"


def on_disk(image_dir: Path) -> Keep:
    """Keep images as files under ``image_dir`` (written whole, then renamed)."""
    async def keep(content: bytes, ext: str) -> str:
        return await asyncio.to_thread(_store, content, ext, image_dir)
    return keep


class _RefusedError(Exception):
    """The answer was not an image we keep."""


def _store(content: bytes, ext: str, image_dir: Path) -> str:
    relative = media_name(content, ext)
    target = image_dir / relative
    if target.exists():
        return relative
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        Path(tmp).replace(target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return relative


async def _download(
    url: str, page_url: str, fetcher: Fetcher, keep: Keep, max_bytes: int
) -> str:
    resp = await fetcher.fetch(
        url, referer=page_url, max_bytes=max_bytes, headers={"Accept": _ACCEPT}
    )
    ext = _EXTENSIONS.get(resp.content_type)
    if ext is None:
        raise _RefusedError(f"not a raster image ({resp.content_type or 'no content type'})")
    if not resp.content:
        raise _RefusedError("empty body")
    return await keep(resp.content, ext)


async def _try_download(
    url: str, page_url: str, fetcher: Fetcher, keep: Keep, max_bytes: int
) -> str | Exception:
    try:
        return await _download(url, page_url, fetcher, keep, max_bytes)
    except (FetchError, _RefusedError, OSError) as exc:
        return exc


def _absolute(src: str | None, page_url: str) -> str | None:
    if not src or not src.strip():
        return None
    url = urljoin(page_url, src.strip())
    return url if urlsplit(url).scheme in ("http", "https") else None


async def localize_images(
    html: str,
    page_url: str,
    fetcher: Fetcher,
    image_dir: Path | Keep,
    *,
    max_images: int = MAX_IMAGES,
    max_bytes: int = MAX_IMAGE_BYTES,
    url_prefix: str = "/media/",
) -> ImageResult:
    """Download the images of ``html`` (an article fragment) and rewrite their ``src``;
    ``image_dir`` is the folder to keep them in, or how to keep them."""
    if "<img" not in html:
        return ImageResult(html, (), ())
    keep = on_disk(image_dir) if isinstance(image_dir, Path) else image_dir
    wrapper = lxml.html.fragment_fromstring(html, create_parent="div")
    images = list(wrapper.iter("img"))
    wanted: list[str] = []
    for img in images:
        url = _absolute(img.get("src") or img.get("data-original-src"), page_url)
        img.attrib.pop("srcset", None)
        img.attrib.pop("sizes", None)
        if url is not None:
            img.set("data-original-src", url)
            if url not in wanted and len(wanted) < max_images:
                wanted.append(url)
    outcomes = await asyncio.gather(
        *(_try_download(u, page_url, fetcher, keep, max_bytes) for u in wanted)
    )
    done = dict(zip(wanted, outcomes, strict=True))
    stored: list[str] = []
    failed: list[tuple[str, str]] = []
    for img in images:
        outcome = done.get(img.get("data-original-src", ""))
        if isinstance(outcome, str):
            img.set("src", url_prefix + outcome)
            if outcome not in stored:
                stored.append(outcome)
            continue
        img.set("src", "")
        reason = "over the image limit" if outcome is None else str(outcome)
        failed.append((img.get("data-original-src", ""), reason))
    return ImageResult(_inner_html(wrapper), tuple(stored), tuple(failed))


def _inner_html(wrapper: lxml.html.HtmlElement) -> str:
    parts = [wrapper.text or ""]
    parts.extend(etree.tostring(child, encoding="unicode", method="html") for child in wrapper)
    return "".join(parts)
