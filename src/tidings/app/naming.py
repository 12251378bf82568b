"""What a new source is called: its id (from its title or URL, or as chosen) and the
URL of an ``external`` source, which has nothing to fetch.

Pure (no storage, no network): ``sources.py`` decides with these and stores.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

from tidings.errors import BadValueError, ConfigError

#: path parts that say "this is a feed" and nothing about whose
_FEED_WORDS = {"feed", "feeds", "rss", "rss2", "atom", "index", "xml", "json"}
#: what a source id may look like: it is a path segment of the web reader's URLs
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def _ascii_slug(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")


def source_slug(title: str, url: str) -> str:
    """The readable base of a new source's id: the title when it has Latin letters,
    else the URL's host and path (a Chinese title would leave only ``source``)."""
    from_title = _ascii_slug(title)
    if re.search("[a-z]", from_title):
        return from_title[:40].strip("-")
    host = host_of(url)
    if url.startswith(EXTERNAL_SCHEME):
        return _ascii_slug(host)[:40].strip("-") or "source"
    path = re.sub(r"^[a-z][a-z0-9+.-]*://[^/?#]*", "", url, flags=re.IGNORECASE)
    words = [re.sub(r"\.(xml|rss|atom|json|php|html?)$", "", w, flags=re.IGNORECASE)
             for w in path.split("?")[0].split("#")[0].split("/")]
    words = [w for w in words if w and w.lower() not in _FEED_WORDS]
    return _ascii_slug("-".join([host, *words]))[:40].strip("-") or "source"


def check_source_id(source_id: str) -> str:
    """A chosen id, refused when it could not be part of a URL path as it is."""
    if not _ID.fullmatch(source_id) or ".." in source_id:
        raise BadValueError(f"source id {source_id!r}: use up to 64 letters, digits, '-', '_' "
                          "or '.', starting with a letter or digit (no spaces, slashes or '..')")
    return source_id


def slugify(text: str, taken: Collection[str] = ()) -> str:
    """A stable, readable source id from a title or URL host, unique among ``taken``."""
    base = _ascii_slug(text)[:40].strip("-") or "source"
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
