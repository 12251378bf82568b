"""Sources as a person adds them: ids from titles, the defaults, OPML in and out.

Pure helpers of the facade (no storage, no network): they decide what a new
source looks like; the facade validates and stores it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from importlib import resources
from typing import Any

from tidings.errors import ConfigError
from tidings.model import Source, SourceKind
from tidings.opml import OpmlFeed, render_opml


def slugify(text: str, taken: Collection[str] = ()) -> str:
    """A stable, readable source id from a title or URL host, unique among ``taken``."""
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "source"
    slug, n = base, 2
    while slug in taken:
        slug = f"{base}-{n}"
        n += 1
    return slug


#: the URL of a source that has nothing to fetch (push ingest): ``external:<name>``
EXTERNAL_SCHEME = "external:"


def external_url(name: str) -> str:
    """The URL an ``external`` source is stored under (sources are unique by URL)."""
    bare = name.strip().removeprefix(EXTERNAL_SCHEME)
    if not bare or any(c.isspace() for c in bare):
        raise ConfigError(f"{name!r}: an external source needs a name without spaces "
                          "(tidings add --kind external NAME)")
    return EXTERNAL_SCHEME + bare


def host_of(url: str) -> str:
    """The host of an http(s) URL without ``www.`` (the name of an ``external:`` one);
    ConfigError for anything else."""
    if url.startswith(EXTERNAL_SCHEME):
        return url.removeprefix(EXTERNAL_SCHEME)
    match = re.match(r"^[a-z][a-z0-9+.-]*://([^/:?#]+)", url, re.IGNORECASE)
    if not match:
        raise ConfigError(f"{url}: not an http(s) URL")
    return match.group(1).removeprefix("www.")


def default_sources() -> list[dict[str, Any]]:
    """The default sources of SPEC §13, as shipped in ``data/default_sources.json``."""
    data: list[dict[str, Any]] = json.loads(resources.files("tidings").joinpath(
        "data/default_sources.json").read_text("utf-8"))
    return data


def opml_of(sources: Iterable[Source]) -> str:
    """OPML of the sources that are feeds, and of the X and WeChat accounts (their URLs
    come back as accounts on import); other kinds have no URL a reader could poll."""
    kinds = (SourceKind.RSS, SourceKind.X, SourceKind.WECHAT)
    return render_opml(OpmlFeed(s.url, s.title, s.site_url or "", s.folder or "")
                       for s in sources if s.kind in kinds)
