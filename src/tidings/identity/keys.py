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
    entry links to the home page), so an entry whose URL is shared is keyed
    by the ``src:`` hash of normalized URL + newline + title. Which entries
    share is a question about the batch (:func:`batch_keys`); taken alone,
    :func:`identity_key` gives every entry that hash.

  The URL inside every hash is the normalized one, so tracking parameters
  never change a key; the title is whitespace-collapsed.
* :func:`choose_identity_mode` looks at one batch (one fetch of one source).
  An entry "has a bad GUID" when its GUID is empty/missing or when another
  entry of the batch has the same GUID (every entry of such a group counts:
  each of them would be lost or merged). More than 5% bad GUIDs -> ``URL``.
  More than 5% of the entries sharing a (normalized, non-empty) URL with
  another entry (fragments kept where :func:`batch_keys` keeps them) ->
  ``URL_TITLE``; this applies from either lower mode, since ``GUID`` mode
  keys by URL as well. Modes only ever move down that list:
  one clean batch proves nothing about the next, and a key scheme that
  flips back and forth would duplicate every item at each flip.
* :func:`batch_keys` keys a whole batch, because two rules need the other
  entries of the same fetch (collection, ``doctor`` and re-parse all call it;
  :func:`identity_key` is the rule for an entry alone):

  - Fragments. R-DEDUP-2 drops them: in most feeds a fragment only points
    into the item's own page (``#more``, ``#comments``). Some feeds put many
    entries on one page and tell them apart by the fragment alone: a "now"
    page whose entries are its sections, a comment feed linking
    ``…/comment-page-1/#comment-210``. So when the fragment-less URL of an
    entry is shared by entries of the batch with a *different* fragment (no
    fragment counts as one), every entry of that URL keeps its fragment, in
    the key and in the stored URL. The same URL with the same fragment is one
    entry listed twice. A feed whose entries each have a page of their own
    keeps dropping fragments.
  - ``URL_TITLE`` degrades per entry: only an entry whose URL (after the
    fragment rule) is shared with an entry of another title gets the
    ``src:`` hash; an entry with a URL of its own keeps the URL key, so its
    copy of a wire story still folds with other sources' copies (R-DEDUP-3).

  The price of deciding per batch: an entry whose URL stops (or starts)
  being shared in a later fetch changes its key, and is stored once more.
  Feeds that share URLs do so in every fetch (the home page, the "now" page),
  so this is rare, and cheaper than merging distinct entries forever.
* An entry with an explicit key keeps its URL's fragment in the stored URL:
  its identity does not depend on the URL, and a stored item that comes back
  through the pipeline (extraction, re-parse) must keep the URL it has.
"""

from __future__ import annotations

import functools
import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tidings.identity.urls import is_http_url, normalize_url, url_fragment
from tidings.model import IdentityMode, ItemData
from tidings.textutil import collapse_ws

__all__ = ["BAD_SHARE", "EntryKey", "batch_keys", "choose_identity_mode", "identity_key",
           "source_hash_key"]

#: Share of bad entries in a batch above which a source's mode degrades.
BAD_SHARE = 0.05

_ORDER = {IdentityMode.GUID: 0, IdentityMode.URL: 1, IdentityMode.URL_TITLE: 2}


def source_hash_key(source_id: str, url: str, title: str) -> str:
    """``src:<source id>:<sha256(url + "\\n" + title)[:32]>`` (R-DEDUP-1)."""
    digest = hashlib.sha256(f"{url}\n{title}".encode()).hexdigest()[:32]
    return f"src:{source_id}:{digest}"


# Asked three times for each entry of a batch (the mode check, the batch's links, the
# stored URL), each time parsing the URL twice: remembering recent answers saves two.
@functools.lru_cache(maxsize=8192)
def _http_norm(value: str | None, extra_tracking: tuple[str, ...]) -> str | None:
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
    """The identity key of one entry of ``source_id`` under ``mode``, taken alone.

    A batch of entries goes through :func:`batch_keys`, which may keep a
    fragment or keep a URL key that this rule alone would not.
    """
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
    norm_urls = _identities([_link(u, extra) for u in urls])
    if _bad_share(norm_urls, empty_is_bad=False) > BAD_SHARE:
        wanted = IdentityMode.URL_TITLE
    return wanted if _ORDER[wanted] > _ORDER[current] else current


# ------------------------------------------------------------------ batches

#: (normalized URL without fragment, normalized fragment or "")
_Link = tuple[str, str]


@dataclass(frozen=True, slots=True)
class EntryKey:
    """One entry's identity key and the URL to store with it (normalized; with the
    fragment where the fragment tells entries apart)."""

    key: str
    url: str | None


def _link(value: str | None, extra: tuple[str, ...]) -> _Link | None:
    page = _http_norm(value, extra)
    if page is None or value is None:
        return None
    # a URL normalization could not parse comes back as given, fragment and all
    return page, "" if "#" in page else url_fragment(value)


def _identities(links: Sequence[_Link | None]) -> list[str | None]:
    """Each link as an identity: its page, plus the fragment where that page is
    listed with more than one fragment in the batch."""
    fragments: dict[str, set[str]] = defaultdict(set)
    for link in links:
        if link is not None:
            fragments[link[0]].add(link[1])
    return [None if link is None else
            f"{link[0]}#{link[1]}" if link[1] and len(fragments[link[0]]) > 1 else link[0]
            for link in links]


def _shared(ids: Sequence[str | None], titles: Sequence[str]) -> set[str]:
    """The URLs that entries of different titles share."""
    seen: dict[str, str] = {}
    shared: set[str] = set()
    for ident, title in zip(ids, titles, strict=True):
        if ident is not None and seen.setdefault(ident, title) != title:
            shared.add(ident)
    return shared


def _entry_link(entry: ItemData, mode: IdentityMode, extra: tuple[str, ...]) -> _Link | None:
    """What a URL identity of ``entry`` is made of: its URL, else (``GUID``) a
    permalink GUID; None for an explicit key, which the batch does not decide."""
    if entry.key and entry.key.strip():
        return None
    link = _link(entry.url, extra)
    if link is None and mode is IdentityMode.GUID:
        link = _link(entry.guid, extra)
    return link


def _stored_url(entry: ItemData, ident: str | None, extra: tuple[str, ...]) -> str | None:
    if not entry.url:
        return None
    if ident is not None and _http_norm(entry.url, extra) is not None:
        return ident  # the URL made the identity
    url = normalize_url(entry.url, extra)
    explicit = entry.key and entry.key.strip()
    fragment = url_fragment(entry.url) if explicit and "#" not in url else ""
    return f"{url}#{fragment}" if fragment else url


def batch_keys(
    source_id: str,
    entries: Sequence[ItemData],
    mode: IdentityMode,
    extra_tracking: Iterable[str] = (),
) -> list[EntryKey]:
    """The key and stored URL of each entry of one batch of ``source_id``, in order
    (the batch rules are in the module doc). Repeated keys are the caller's to drop."""
    extra = tuple(extra_tracking)
    ids = _identities([_entry_link(e, mode, extra) for e in entries])
    shared = (_shared(ids, [collapse_ws(e.title) for e in entries])
              if mode is IdentityMode.URL_TITLE else set())
    out = []
    for entry, ident in zip(entries, ids, strict=True):
        if ident is None or ident in shared:
            key = identity_key(source_id=source_id, url=entry.url, title=entry.title,
                               guid=entry.guid, explicit=entry.key, mode=mode,
                               extra_tracking=extra)
        else:
            key = ident
        out.append(EntryKey(key, _stored_url(entry, ident, extra)))
    return out
