"""The blogroll scorer's shortcuts for resolving links give what the long way gives."""

from __future__ import annotations

import pytest

from tidings.discovery.blogroll import _Page
from tidings.discovery.sites import paths_stay_home, site_key
from tidings.identity import resolve_url

PAGES = [
    "http://blog.example.org/", "https://www.example.co.uk/2024/01/post/?x=1",
    "https://medium.com/@bob", "https://www.cnblogs.com/alice/", "https://mastodon.example/@ann",
    "https://alice.github.io/notes/", "http://127.0.0.1:8080/", "HTTPS://Example.ORG/a/b",
    "ftp://example.org/", "https://github.com/someone",
]
HREFS = [
    "/", "/about/", "/tag/tea/", "/@carol", "/cat/../up/", "//other.example/", "/x?y=1#z",
    "about/", "../up/", "?page=2", "#top", "", "javascript:void(0)", "mailto:a@b.c",
    "http://other.example/", "https://other.example/path/", "HTTP://Upper.example/",
    "http://", "http:///path", "http:/relative", "https://[::1]:8443/", "http://[bad/",
    "https://user@host.example/", "http://\thost.example/", "https://ex.example/ä?q=ü#f",
]


@pytest.mark.parametrize("page_url", PAGES)
def test_resolving_through_the_page_is_resolve_url(page_url: str) -> None:
    page = _Page.of(page_url)
    for href in HREFS:
        assert page.resolve(href) == resolve_url(page_url, href), href


@pytest.mark.parametrize("page_url", PAGES)
def test_a_path_taken_as_internal_is_on_the_page_s_site(page_url: str) -> None:
    page = _Page.of(page_url)
    for href in HREFS:
        if page.is_internal_path(href):
            url = resolve_url(page_url, href)
            assert url is not None and site_key(url) == site_key(page_url), href


def test_path_sites_and_profiles_are_resolved_the_long_way() -> None:
    assert paths_stay_home("https://blog.example.org/2024/")
    assert not paths_stay_home("https://medium.com/@bob")
    assert not paths_stay_home("https://www.cnblogs.com/alice/")
    assert not paths_stay_home("https://mastodon.example/@ann")
    assert not paths_stay_home("ftp://example.org/")
    assert not _Page.of("https://medium.com/@bob").is_internal_path("/@carol")
