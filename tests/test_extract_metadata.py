"""Metadata table tests: dates, author, title, language, lead image."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import lxml.html
import pytest

from tidings.extract import extract_metadata
from tidings.extract.metadata import Metadata, parse_date

URL = "https://paper.example/2024/story.html"


def _meta(head: str = "", body: str = "", html_attrs: str = "") -> Metadata:
    page = f"<html {html_attrs}><head>{head}</head><body>{body}<p>x</p></body></html>"
    return extract_metadata(lxml.html.document_fromstring(page), URL)


def _ld(obj: object) -> str:
    return f'<script type="application/ld+json">{json.dumps(obj)}</script>'


D = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)

DATE_CASES = [
    ('<meta property="article:published_time" content="2024-03-01T12:00:00Z">', "", D),
    ('<meta property="article:published_time" content="2024-03-01T20:00:00+08:00">', "", D),
    ('<meta name="pubdate" content="2024-03-01T12:00:00">', "", D),
    ('<meta itemprop="datePublished" content="2024-03-01T12:00:00Z">', "", D),
    (_ld({"@type": "NewsArticle", "datePublished": "2024-03-01T12:00:00Z"}), "", D),
    (
        _ld(
            {
                "@context": "https://schema.org",
                "@graph": [
                    {"@type": "WebSite", "datePublished": "1999-01-01"},
                    {"@type": "BlogPosting", "datePublished": "2024-03-01T07:00:00-05:00"},
                ],
            }
        ),
        "",
        D,
    ),
    (_ld([{"@type": "Article", "datePublished": "2024-03-01T12:00:00Z"}]), "", D),
    ("", '<time datetime="2024-03-01T12:00:00Z">1 March</time>', D),
    ("", "<time>yesterday</time>", None),
    ('<meta property="article:published_time" content="not a date">', "", None),
    ('<script type="application/ld+json">{broken</script>', "", None),
    # meta wins over JSON-LD, JSON-LD over <time>
    (
        '<meta property="article:published_time" content="2024-03-01T12:00:00Z">'
        + _ld({"@type": "NewsArticle", "datePublished": "2020-01-01T00:00:00Z"}),
        '<time datetime="2019-01-01">x</time>',
        D,
    ),
    (
        _ld({"@type": "NewsArticle", "datePublished": "2024-03-01T12:00:00Z"}),
        '<time datetime="2019-01-01">x</time>',
        D,
    ),
]


@pytest.mark.parametrize(("head", "body", "expected"), DATE_CASES)
def test_published_date(head: str, body: str, expected: datetime | None) -> None:
    assert _meta(head, body).published_at == expected


AUTHOR_CASES = [
    ('<meta name="author" content="Ada Byron">', "", "Ada Byron"),
    ('<meta property="article:author" content="https://fb.example/ada">', "", None),
    (
        _ld({"@type": "NewsArticle", "author": {"@type": "Person", "name": "Ada Byron"}}),
        "",
        "Ada Byron",
    ),
    (
        _ld({"@type": "NewsArticle", "author": [{"name": "Ada Byron"}, {"name": "Ben Ng"}]}),
        "",
        "Ada Byron, Ben Ng",
    ),
    ("", '<a rel="author" href="/ada"> Ada  Byron </a>', "Ada Byron"),
    ("", "", None),
]


@pytest.mark.parametrize(("head", "body", "expected"), AUTHOR_CASES)
def test_author(head: str, body: str, expected: str | None) -> None:
    assert _meta(head, body).author == expected


def test_title_order() -> None:
    assert _meta('<meta property="og:title" content="OG">', "<h1>H1</h1>").title == "OG"
    assert _meta("<title>Page | Site</title>", "<h1>H1</h1>").title == "H1"
    assert _meta("<title>Page | Site</title>").title == "Page | Site"


LANGUAGE_CASES = [
    ('lang="zh-CN"', "", "zh-CN"),
    ("", '<meta http-equiv="content-language" content="de">', "de"),
    ("", '<meta property="og:locale" content="fr_FR">', "fr-FR"),
    ("", "", None),
]


@pytest.mark.parametrize(("attrs", "head", "expected"), LANGUAGE_CASES)
def test_language(attrs: str, head: str, expected: str | None) -> None:
    assert _meta(head, html_attrs=attrs).language == expected


IMAGE_CASES = [
    ('<meta property="og:image" content="/img/a.jpg">', "https://paper.example/img/a.jpg"),
    (
        '<meta name="twitter:image" content="https://cdn.example/b.png">',
        "https://cdn.example/b.png",
    ),
    (_ld({"@type": "NewsArticle", "image": {"url": "c.jpg"}}), "https://paper.example/2024/c.jpg"),
    (
        _ld({"@type": "NewsArticle", "image": ["https://cdn.example/d.jpg"]}),
        "https://cdn.example/d.jpg",
    ),
    ("", None),
    ('<meta property="og:image" content="javascript:alert(1)">', None),
    ('<meta property="og:image" content="data:image/svg+xml,&lt;svg/&gt;">', None),
]


@pytest.mark.parametrize(("head", "expected"), IMAGE_CASES)
def test_lead_image(head: str, expected: str | None) -> None:
    assert _meta(head).lead_image == expected


def test_parse_date_forms() -> None:
    assert parse_date("2024-03-01") == datetime(2024, 3, 1, tzinfo=UTC)
    assert parse_date("Fri, 01 Mar 2024 12:00:00 GMT") == D
    assert parse_date("") is None
    assert parse_date("garbage") is None


@pytest.mark.parametrize("raw", [
    "0001-01-01T00:00:00Z",  # Go's zero time (Hugo)
    "0001-01-01T00:00:00+08:00",  # ... east of UTC: year 0 once in UTC
    "0001-01-01T00:00:00-05:00",
    "January 1, 0001",  # dateutil reads the year as 2001
    "1970-01-01T00:00:00Z",  # Unix time 0
    "1969-12-31T23:59:59Z",  # Unix time -1
])
def test_zero_dates_are_no_dates(raw: str) -> None:
    assert parse_date(raw) is None


@pytest.mark.parametrize("raw", ["March 5", "5 March", "10:30", "Monday"])
def test_partial_dates_are_not_completed_from_today(raw: str) -> None:
    assert parse_date(raw) is None


def test_a_zero_date_gives_way_to_the_next_source() -> None:
    head = ('<meta property="article:published_time" content="0001-01-01T00:00:00+08:00">'
            + _ld({"@type": "NewsArticle", "datePublished": "2024-03-01T12:00:00Z"}))
    assert _meta(head).published_at == D


def test_description_prefers_open_graph() -> None:
    assert _meta('<meta name="twitter:description" content="t">'
                 '<meta name="description" content=" plain  text ">').description == "plain text"
    assert _meta('<meta name="description" content="plain">'
                 '<meta property="og:description" content="og">').description == "og"
    assert _meta("").description is None
