"""R-DISC-1 tightened: which ``<link>`` is a declared feed, and what the others are worth."""

from __future__ import annotations

import pytest

from tidings.discovery.html import FULL_DECLARATION, OTHER_REL, collect_candidates

PAGE = "https://blog.example/"


def one(link: str) -> tuple[str, int, str] | None:
    """(origin, score, type) of the one candidate a page with ``link`` has, or None."""
    found = collect_candidates(f"<html><head>{link}</head><body></body></html>", PAGE)
    if not found:
        return None
    assert len(found) == 1
    f = found[0]
    return f.origin, f.candidate.score, f.candidate.type


@pytest.mark.parametrize(
    ("media", "kind"),
    [
        ("application/rss+xml", "rss"),
        ("application/atom+xml", "atom"),
        ("application/rdf+xml", "rdf"),
        ("application/feed+json", "json"),
        ("application/jf2feed+json", "jf2"),
    ],
)
def test_alternate_with_a_feed_type_is_a_declaration(media: str, kind: str) -> None:
    assert one(f'<link rel="alternate" type="{media}" href="/f">') == (
        "link", FULL_DECLARATION, kind)


def test_rel_tokens_are_case_insensitive_and_any_order() -> None:
    assert one('<link rel="Home ALTERNATE" type="application/atom+xml" href="/f">') == (
        "link", FULL_DECLARATION, "atom")


def test_type_parameters_and_case_are_dropped() -> None:
    link = '<link rel="alternate" type="Application/RSS+XML; charset=UTF-8" href="/f">'
    assert one(link) == ("link", FULL_DECLARATION, "rss")


def test_vendor_spelling_is_a_declaration_worth_a_little_less() -> None:
    assert one('<link rel="alternate" type="application/x-rss+xml" href="/f">') == (
        "link", FULL_DECLARATION - 1, "rss")


@pytest.mark.parametrize("rel", ["self", "service.post", "feed", "home", "related"])
def test_a_feed_type_under_another_rel_is_only_a_low_guess(rel: str) -> None:
    assert one(f'<link rel="{rel}" type="application/atom+xml" href="/f">') == (
        "guess", OTHER_REL, "atom")


@pytest.mark.parametrize("rel", ["sitemap", "hub", "icon", "alternate icon", "stylesheet",
                                 "search", "EditURI", "pingback"])
def test_rels_that_are_never_feeds(rel: str) -> None:
    assert one(f'<link rel="{rel}" type="application/rss+xml" href="/feed.xml">') is None


def test_alternate_icon_without_a_feed_type_is_nothing() -> None:
    assert one('<link rel="alternate icon" type="image/png" href="/favicon.png">') is None


def test_generic_types_are_guesses_only_at_feed_like_addresses() -> None:
    assert one('<link rel="alternate" type="text/xml" href="/rss.xml">') == ("guess", 6, "rss")
    assert one('<link rel="alternate" type="application/json" href="/feed.json">') == (
        "guess", 5, "json")
    assert one('<link rel="alternate" type="application/xml" href="/page.xml">') is None
    assert one('<link rel="alternate" type="text/html" href="/feed">') is None


def test_untyped_alternate_translation_is_not_a_feed() -> None:
    assert one('<link rel="alternate" hreflang="de" href="/de/feed">') is None
    assert one('<link rel="alternate" href="/feed">') == ("guess", 6, "rss")


def test_a_guess_does_not_stop_probing_but_a_declaration_does() -> None:
    guess = collect_candidates(
        '<link rel="self" type="application/atom+xml" href="/atom">', PAGE)
    assert not any(f.declared for f in guess)
    declared = collect_candidates(
        '<link rel="alternate" type="application/atom+xml" href="/atom">', PAGE)
    assert all(f.declared for f in declared)


def test_declaration_beats_the_same_feed_guessed_elsewhere() -> None:
    html = """<link rel="self" type="application/atom+xml" href="/atom.xml">
    <link rel="alternate" type="application/atom+xml" title="Site" href="/atom.xml">"""
    (found,) = collect_candidates(html, PAGE)
    assert (found.origin, found.candidate.score) == ("link", FULL_DECLARATION)
