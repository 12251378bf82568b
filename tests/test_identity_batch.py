"""Keys of a whole batch: fragments that tell entries apart (R-DEDUP-1/2) and the
per-entry URL_TITLE degradation (R-DEDUP-10)."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from tidings.identity import EntryKey, batch_keys, choose_identity_mode, identity_key
from tidings.model import IdentityMode, ItemData

GUID, URL, URL_TITLE = IdentityMode.GUID, IdentityMode.URL, IdentityMode.URL_TITLE


def keys(entries: list[ItemData], mode: IdentityMode = GUID) -> list[EntryKey]:
    return batch_keys("blog", entries, mode)


def alone(entry: ItemData, mode: IdentityMode) -> str:
    return identity_key(source_id="blog", url=entry.url, title=entry.title, guid=entry.guid,
                        explicit=entry.key, mode=mode)


# ---------------------------------------------------------------- fragments


def test_entries_of_one_page_told_apart_by_the_fragment_keep_it() -> None:
    page = "https://E.com/2026/02/post/comment-page-1/?utm_source=rss"
    got = keys([ItemData(title="Re: post", url=f"{page}#comment-{n}") for n in (210, 211, 212)])
    expected = [f"https://e.com/2026/02/post/comment-page-1#comment-{n}" for n in (210, 211, 212)]
    assert [k.key for k in got] == expected
    assert [k.url for k in got] == expected  # stored as opened: with the fragment


def test_fragments_are_normalized_like_the_rest_of_the_url() -> None:
    got = keys([ItemData(url="https://e.com/now.html#2026-02-16 Title"),
                ItemData(url="https://e.com/now.html#2026-02-09%20Other%7e")])
    assert [k.key for k in got] == ["https://e.com/now.html#2026-02-16%20Title",
                                    "https://e.com/now.html#2026-02-09%20Other~"]
    again = keys([ItemData(url=k.key) for k in got])
    assert again == got  # idempotent: a stored URL keys the same


def test_the_same_url_and_fragment_is_one_entry() -> None:
    got = keys([ItemData(title="A", url="https://e.com/p#x"),
                ItemData(title="A", url="https://e.com/p#x")])
    assert [k.key for k in got] == ["https://e.com/p", "https://e.com/p"]


def test_no_fragment_counts_as_one_fragment_of_the_page() -> None:
    got = keys([ItemData(url="https://e.com/p"), ItemData(url="https://e.com/p#update")])
    assert [k.key for k in got] == ["https://e.com/p", "https://e.com/p#update"]


def test_entries_with_pages_of_their_own_drop_the_fragment() -> None:
    entries = [ItemData(title=f"T{n}", url=f"https://e.com/{n}#more") for n in range(5)]
    got = keys(entries)
    assert [k.key for k in got] == [f"https://e.com/{n}" for n in range(5)]
    assert [k.url for k in got] == [f"https://e.com/{n}" for n in range(5)]


def test_permalink_guids_without_links_keep_their_fragments_in_guid_mode() -> None:
    entries = [ItemData(title=f"T{n}", guid=f"https://e.com/now.html#{n}") for n in range(3)]
    got = keys(entries)
    assert [k.key for k in got] == [f"https://e.com/now.html#{n}" for n in range(3)]
    assert [k.url for k in got] == [None, None, None]  # the reader gives the URL, not identity
    assert len({k.key for k in keys(entries, URL)}) == 3  # URL mode: titles, as before


def test_an_explicit_key_keeps_the_fragment_of_its_url() -> None:
    """Extraction and re-parse send a stored item back with its key: its URL stays."""
    [got] = keys([ItemData(key="https://e.com/now.html#a", url="https://e.com/now.html#a")])
    assert got == EntryKey("https://e.com/now.html#a", "https://e.com/now.html#a")
    [plain] = keys([ItemData(url="https://e.com/now.html#a")])
    assert plain == EntryKey("https://e.com/now.html", "https://e.com/now.html")


def test_shared_pages_with_fragments_are_not_repeated_urls() -> None:
    guids: list[str | None] = [f"g{i}" for i in range(10)]
    urls: list[str | None] = [f"https://e.com/p/comment-page-1/#comment-{i}" for i in range(5)]
    urls += [f"https://e.com/{i}" for i in range(5)]
    assert choose_identity_mode(guids, urls, GUID) is GUID
    urls[1] = urls[0]  # the same comment listed twice is a repeat
    assert choose_identity_mode(guids, urls, GUID) is URL_TITLE


# ---------------------------------------------------------------- URL_TITLE


def test_url_title_degrades_only_the_entries_that_share_a_url() -> None:
    wire = ItemData(title="Wire story 3", url="https://news.example/wire/3?utm_source=x")
    home = [ItemData(title=f"Notice {n}", url="https://e.com/") for n in range(2)]
    got = keys([wire, *home], URL_TITLE)
    assert got[0] == EntryKey("https://news.example/wire/3", "https://news.example/wire/3")
    assert got[1].key.startswith("src:blog:") and got[2].key.startswith("src:blog:")
    assert got[1].key != got[2].key
    # the degraded keys are the ones stored before: no item changes its key
    assert [k.key for k in got[1:]] == [alone(e, URL_TITLE) for e in home]
    assert [k.url for k in got[1:]] == ["https://e.com/", "https://e.com/"]


def test_url_title_an_entry_listed_twice_is_not_a_shared_url() -> None:
    twice = [ItemData(title="Same", url="https://e.com/a"), ItemData(title=" Same ",
                                                                    url="https://e.com/a/")]
    assert [k.key for k in keys(twice, URL_TITLE)] == ["https://e.com/a", "https://e.com/a"]


def test_url_title_without_a_url_is_the_title_hash() -> None:
    entry = ItemData(title="Hello", guid="https://e.com/g")
    assert keys([entry], URL_TITLE)[0].key == alone(entry, URL_TITLE)


# ---------------------------------------------------------------- one entry

_entry = st.builds(
    ItemData,
    title=st.text(max_size=12),
    url=st.none() | st.sampled_from(["https://e.com/a#x", "HTTP://E.com:80/b?utm_source=1",
                                     "https://e.com/", "magnet:?xt=1", " "]),
    guid=st.none() | st.sampled_from(["tag:e.com,1", "https://e.com/g#f", ""]),
    key=st.none() | st.text(string.ascii_lowercase + ":", max_size=6),
)


@given(_entry, st.sampled_from(list(IdentityMode)))
def test_a_batch_of_one_keys_as_the_entry_alone(entry: ItemData, mode: IdentityMode) -> None:
    """An entry alone shares its URL with nobody: in URL_TITLE it keys as in URL."""
    [got] = batch_keys("blog", [entry], mode)
    assert got.key == alone(entry, URL if mode is URL_TITLE else mode)
