"""What the CLI does without an archive: discover feeds on a page, extract an article.

``tidings discover`` and ``tidings extract`` work in any directory (SPEC §12),
so they open a fetcher of their own and no storage.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import TYPE_CHECKING

from tidings.errors import BadValueError, ConfigError
from tidings.model import FeedCandidate
from tidings.net import Fetcher, allow_list_from_settings, url_refusal
from tidings.settings import Settings

if TYPE_CHECKING:  # article extraction loads on first use (see tidings.extract)
    from tidings.extract import Extraction


def guard_refusal(settings: Settings, url: str) -> str | None:
    """A one-line refusal when the guard would refuse ``url`` by its host alone (an
    address literal, a local name), else None; sends nothing. For the paths that add a
    source without fetching it, so they say so at once as ``tidings add`` does."""
    why = url_refusal(url, allow_list_from_settings(settings))
    if why is None:
        return None
    return f"{url}: the guard refuses this address ({why}); allow_private_hosts lets it through"


def discover_feeds(settings: Settings, url: str) -> list[FeedCandidate]:
    """Autodiscovery without an archive (``tidings discover`` works anywhere)."""
    from tidings.discovery import discover

    async def run() -> list[FeedCandidate]:
        async with Fetcher(settings) as fetcher:
            return list((await discover(url, fetcher)).candidates)

    return asyncio.run(run())


def extract_target(settings: Settings, target: str, *, page_url: str | None = None,
                   stdin: bytes | None = None) -> Extraction:
    """Extract the article of a URL (fetched through the guard), of an HTML file or of
    ``stdin`` (target ``-``), without an archive (``tidings extract``). ``page_url`` is
    where a file's page came from (relative links, metadata)."""
    from tidings.extract import extract_article
    from tidings.net import decode_body, decode_text

    if re.match(r"^https?://", target, re.IGNORECASE):
        async def fetch() -> tuple[str, str]:
            async with Fetcher(settings) as fetcher:
                resp = await fetcher.fetch(target)
                return decode_body(resp), resp.final_url

        html, url = asyncio.run(fetch())
        return extract_article(html, url)
    path = Path(target)
    if target == "-" and stdin is not None:
        content = stdin
    elif not path.is_file():
        raise BadValueError(f"{target}: neither an http(s) URL nor a readable file")
    else:
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"{target}: cannot read ({exc.strerror})") from exc
    base = page_url or ("" if target == "-" else path.resolve().as_uri())
    return extract_article(decode_text(content), base)
