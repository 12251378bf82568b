"""Identity keys (R-DEDUP-1) and the identity mode of a source (R-DEDUP-10).

Reading of the rules, as implemented:

* The key is, first that applies: the reader's explicit key; the normalized
  URL; ``src:<source id>:<sha256(url + "\\n" + title)[:32]>``. Items are keyed
  by URL rather than by GUID on purpose: a reprint of an article in another
  feed (aggregator, mirror) must share its identity, and GUIDs are per feed.
* What a mode changes is how far the URL and the GUID are trusted:

  - ``GUID`` (default, nothing wrong seen yet): the URL is the key. An entry
    without a URL whose GUID is itself an http(s) URL (common in RSS, where
    ``<guid isPermaLink="true">`` is the link) is keyed by that URL. An entry
    with neither but with some other GUID is keyed by
    ``src:<id>:<sha256("\\n" + guid)[:32]>`` - the GUID stands in for the
    title because the feed promises it is stable while titles get edited.
  - ``URL``: GUIDs are not trusted for anything. URL, else the
    ``src:`` hash of ``"" + "\\n" + title``.
  - ``URL_TITLE``: URLs repeat across different entries (a feed whose every
    entry links to the home page), so the key is always the ``src:`` hash of
    normalized URL + newline + title.

  The URL inside every hash is the normalized one, so tracking parameters
  never change a key; the title is whitespace-collapsed.
* :func:`choose_identity_mode` looks at one batch (one fetch of one source).
  An entry "has a bad GUID" when its GUID is empty/missing or when another
  entry of the batch has the same GUID (every entry of such a group counts:
  each of them would be lost or merged). More than 5% bad GUIDs -> ``URL``.
  More than 5% of the entries sharing a (normalized, non-empty) URL with
  another entry -> ``URL_TITLE``; this applies from either lower mode, since
  ``GUID`` mode keys by URL as well. Modes only ever move down that list:
  one clean batch proves nothing about the next, and a key scheme that
  flips back and forth would duplicate every item at each flip.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence

from tidings.identity.urls import is_http_url, normalize_url
from tidings.model import IdentityMode
from tidings.textutil import collapse_ws

__all__ = ["BAD_SHARE", "choose_identity_mode", "identity_key", "source_hash_key"]

#: Share of bad entries in a batch above which a source's mode degrades.
BAD_SHARE = 0.05

_ORDER = {IdentityMode.GUID: 0, IdentityMode.URL: 1, IdentityMode.URL_TITLE: 2}


def source_hash_key(source_id: str, url: str, title: str) -> str:
    """``src:<source id>:<sha256(url + "\\n" + title)[:32]>`` (R-DEDUP-1)."""
    digest = hashlib.sha256(f"{url}\n{title}".encode()).hexdigest()[:32]
    return f"src:{source_id}:{digest}"


def _http_norm(value: str | None, extra_tracking: Iterable[str]) -> str | None:
    if not value or not value.strip() or not is_http_url(value):
        return None
    normalized = normalize_url(value, extra_tracking)
    return normalized if is_http_url(normalized) else None


def identity_key(
    *,
    source_id: str,
    url: str | None,
    title: str,
    guid: str | None,
    explicit: str | None,
    mode: IdentityMode,
    extra_tracking: Iterable[str] = (),
) -> str:
    """The identity key of one entry of ``source_id`` under ``mode``."""
    if explicit and explicit.strip():
        return explicit.strip()
    extra = tuple(extra_tracking)
    norm_url = _http_norm(url, extra)
    clean_title = collapse_ws(title)
    if mode is IdentityMode.URL_TITLE:
        plain = norm_url or (url or "").strip()
        return source_hash_key(source_id, plain, clean_title)
    if norm_url:
        return norm_url
    guid = (guid or "").strip()
    if mode is IdentityMode.GUID and guid:
        return _http_norm(guid, extra) or source_hash_key(source_id, "", guid)
    return source_hash_key(source_id, (url or "").strip(), clean_title)


def _bad_share(values: Sequence[str | None], *, empty_is_bad: bool) -> float:
    if not values:
        return 0.0
    counts = Counter(v for v in values if v)
    bad = sum(1 for v in values if (not v and empty_is_bad) or (v and counts[v] > 1))
    return bad / len(values)


def choose_identity_mode(
    guids: Sequence[str | None],
    urls: Sequence[str | None],
    current: IdentityMode,
    *,
    extra_tracking: Iterable[str] = (),
) -> IdentityMode:
    """The mode a source should use from now on, given one batch (see module doc)."""
    extra = tuple(extra_tracking)
    wanted = current
    clean_guids = [(g or "").strip() or None for g in guids]
    if _bad_share(clean_guids, empty_is_bad=True) > BAD_SHARE:
        wanted = IdentityMode.URL
    norm_urls = [_http_norm(u, extra) for u in urls]
    if _bad_share(norm_urls, empty_is_bad=False) > BAD_SHARE:
        wanted = IdentityMode.URL_TITLE
    return wanted if _ORDER[wanted] > _ORDER[current] else current
