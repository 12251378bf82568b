"""URL normalization (R-DEDUP-2) and link resolution: tables and properties."""

from __future__ import annotations

import random
import string
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tidings.identity import normalize_url, resolve_url

CASES = [
    # case and default ports
    ("HTTP://Example.COM:80/Path", "http://example.com/Path"),
    ("https://EXAMPLE.com:443/", "https://example.com/"),
    ("https://example.com:8443/a", "https://example.com:8443/a"),
    ("http://example.com:443/", "http://example.com:443/"),
    ("http://example.com:/x", "http://example.com/x"),
    # fragment, trailing slash, empty path
    ("https://example.com/a/b/#section", "https://example.com/a/b"),
    ("https://example.com", "https://example.com/"),
    ("https://example.com/", "https://example.com/"),
    ("https://example.com//", "https://example.com/"),
    ("https://example.com?b=1", "https://example.com/?b=1"),
    # tracking parameters and query order
    ("https://e.com/p?utm_source=rss&utm_medium=feed&id=3", "https://e.com/p?id=3"),
    ("https://e.com/p?b=2&a=1&spm=a2c&from=timeline", "https://e.com/p?a=1&b=2"),
    ("https://e.com/p?ref=hn&fbclid=X&gclid=Y&mc_cid=1&mc_eid=2", "https://e.com/p"),
    ("https://e.com/p?UTM_Campaign=x&Utm_Term=y&q=1", "https://e.com/p?q=1"),
    ("https://e.com/p?utm%5Fsource=x&q=1", "https://e.com/p?q=1"),
    ("https://e.com/p?referrer=x&fromage=1", "https://e.com/p?fromage=1&referrer=x"),
    ("https://e.com/p?a=1&&b=&c", "https://e.com/p?a=1&b=&c"),
    ("https://e.com/p?", "https://e.com/p"),
    # percent-encoding
    ("https://e.com/%7euser/%e4%b8%ad", "https://e.com/~user/%E4%B8%AD"),
    ("https://e.com/中文?q=中 文", "https://e.com/%E4%B8%AD%E6%96%87?q=%E4%B8%AD%20%E6%96%87"),
    ("https://e.com/a%2Fb?x=%2f", "https://e.com/a%2Fb?x=%2F"),
    ("https://e.com/100%", "https://e.com/100%25"),
    ("https://e.com/%41%42c", "https://e.com/ABc"),
    # dot segments, IDNA, IPv6, userinfo
    ("https://e.com/a/./b/../c/", "https://e.com/a/c"),
    ("https://e.com/%2E%2E/x", "https://e.com/x"),
    ("http://Bücher.Example/", "http://xn--bcher-kva.example/"),
    ("http://[2001:DB8::1]:80/x", "http://[2001:db8::1]/x"),
    ("http://user:pw@E.com/", "http://user:pw@e.com/"),
    # whitespace around
    ("  https://e.com/a \n", "https://e.com/a"),
]

UNCHANGED = [
    "",
    "   ",
    "mailto:someone@example.com",
    "ftp://example.com/file",
    "javascript:alert(1)",
    "/relative/path",
    "example.com/page",
    "http://",
    "http:///path",
    "http://exa mple.com/",
    "http://example.com:99999/",
    "http://example.com:80a/",
    "http://[::1/",
    "http://[not-ipv6]/",
    "x:1234567890",
]


@pytest.mark.parametrize(("raw", "expected"), CASES)
def test_normalize_table(raw: str, expected: str) -> None:
    assert normalize_url(raw) == expected
    assert normalize_url(expected) == expected


@pytest.mark.parametrize("raw", UNCHANGED)
def test_unusable_input_comes_back_stripped(raw: str) -> None:
    assert normalize_url(raw) == raw.strip()
    assert normalize_url(f"  {raw}\t") == raw.strip()


def test_extra_tracking_names_and_prefixes() -> None:
    url = "https://e.com/p?Source=rss&sub=1&pk_campaign=x&pk_kwd=y&keep=1"
    assert normalize_url(url, ["source", "PK_*"]) == "https://e.com/p?keep=1&sub=1"
    assert normalize_url(url) == "https://e.com/p?Source=rss&keep=1&pk_campaign=x&pk_kwd=y&sub=1"


RESOLVE = [
    ("https://a.com/x/y.html", "feed.xml", "https://a.com/x/feed.xml"),
    ("https://a.com/x/y.html", "../rss", "https://a.com/rss"),
    ("https://a.com/x/", "/atom.xml", "https://a.com/atom.xml"),
    ("https://a.com/x/", "//cdn.b.com/feed", "https://cdn.b.com/feed"),
    ("http://a.com/", "https://feeds.other.org/x", "https://feeds.other.org/x"),
    ("http://a.com/", " feed.xml#top ", "http://a.com/feed.xml"),
    ("http://a.com/", "javascript:void(0)", None),
    ("http://a.com/", "mailto:x@a.com", None),
    ("http://a.com/", "#comments", None),
    ("http://a.com/", "", None),
    ("http://a.com/", "http://[::1", None),
    ("not a url", "feed.xml", None),
]


@pytest.mark.parametrize(("base", "href", "expected"), RESOLVE)
def test_resolve_url(base: str, href: str, expected: str | None) -> None:
    assert resolve_url(base, href) == expected


# --------------------------------------------------------------------------- properties

_label = st.text(string.ascii_letters + string.digits, min_size=1, max_size=8)
_host = st.one_of(
    st.lists(_label, min_size=1, max_size=4).map(".".join),
    st.sampled_from(["Bücher.example", "例子.测试", "[::1]", "127.0.0.1", "xn--fsq.com"]),
)
_piece = st.text(max_size=12)
_param_name = st.one_of(
    _piece,
    st.sampled_from(["utm_source", "UTM_medium", "spm", "from", "ref", "fbclid", "id", "p"]),
)
_scheme = st.sampled_from(["http", "https", "HTTP", "Https"])
_port = st.one_of(st.just(""), st.integers(0, 70000).map(lambda p: f":{p}"))
_path = st.lists(st.one_of(_piece, st.sampled_from([".", "..", "%7e", "%2F", "%zz"])), max_size=5)
_query = st.lists(st.tuples(_param_name, st.sampled_from(["=", ""]), _piece), max_size=5)


@st.composite
def urls(draw: st.DrawFn) -> str:
    path = "/".join(draw(_path))
    query = "&".join(n + eq + v for n, eq, v in draw(_query))
    url = f"{draw(_scheme)}://{draw(_host)}{draw(_port)}/{path}"
    if query or draw(st.booleans()):
        url += "?" + query
    if draw(st.booleans()):
        url += "#" + draw(_piece)
    return url


@settings(max_examples=400)
@given(urls())
def test_normalize_is_idempotent(url: str) -> None:
    once = normalize_url(url)
    assert normalize_url(once) == once


@settings(max_examples=300)
@given(st.text(max_size=60))
def test_normalize_never_raises_and_is_idempotent_on_any_text(text: str) -> None:
    once = normalize_url(text)
    assert normalize_url(once) == once
    assert normalize_url("http://h.com/" + text) == normalize_url(
        normalize_url("http://h.com/" + text)
    )


_clean_name = st.text(string.ascii_lowercase, min_size=1, max_size=6).filter(
    lambda n: n not in {"spm", "from", "ref", "fbclid", "gclid"} and not n.startswith("utm_")
)
_clean_params = st.lists(
    st.tuples(_clean_name, st.text(string.ascii_letters + string.digits, max_size=6)),
    max_size=6,
)
_tracking = st.lists(
    st.tuples(
        st.sampled_from(["utm_source", "utm_campaign", "spm", "from", "ref", "fbclid", "gclid"]),
        st.text(string.ascii_letters, max_size=5),
    ),
    max_size=4,
)


@given(_clean_params, _tracking, st.randoms(use_true_random=False))
def test_tracking_removed_and_order_irrelevant(
    params: list[tuple[str, str]], tracking: list[tuple[str, str]], rnd: random.Random
) -> None:
    base = "https://news.example.com/story/42"
    plain = normalize_url(base + "?" + "&".join(f"{n}={v}" for n, v in params))
    mixed = params + tracking
    rnd.shuffle(mixed)
    noisy = normalize_url(base + "?" + "&".join(f"{n}={v}" for n, v in mixed))
    assert noisy == plain
    names = {part.split("=")[0] for part in urlsplit(noisy).query.split("&") if part}
    assert names == {n for n, _ in params}
    assert noisy.startswith(base)
