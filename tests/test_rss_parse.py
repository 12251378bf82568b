"""parse_feed: not-a-feed errors, encodings, robustness (R-RSS-6), real-world corpus."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
from pathlib import Path
from typing import Any

import feedparser
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tidings.errors import ParseError
from tidings.readers.rss import parse_feed

URL = "http://x.example/feed"
DATA = Path(__file__).parent / "data" / "feeds"

NOT_FEEDS = [
    (b"", "empty body"),
    (b"   \n\t ", "empty body"),
    (b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>x</body></html>",
     "got an HTML page (<title>502 Bad Gateway</title>)"),
    (b"<html><body>no title here", "got an HTML page"),
    (b'<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Login'
     b"</title></head></html>", "got an HTML page (<title>Login</title>)"),
    (b'<?xml version="1.0"?><urlset><url><loc>http://x/</loc></url></urlset>',
     "XML root element <urlset> is not rss, RDF or feed"),
    (b'{"data": [1, 2]}', "JSON without a JSON Feed version"),
    (b'{"version": "https://jsonfeed.org/version/1.1", "title": ', "invalid JSON"),
    (b"just some text, not markup", "neither XML nor JSON"),
    (b"\x00\x01\x02\x03binary", "neither XML nor JSON"),
]


@pytest.mark.parametrize(("content", "reason"), NOT_FEEDS)
def test_not_a_feed_is_a_one_line_parse_error(content: bytes, reason: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_feed(content, url=URL)
    message = str(info.value)
    assert message.startswith(f"{URL}: not a feed: ")
    assert reason in message
    assert "\n" not in message
    assert info.value.url == URL


def rss(title: str, encoding: str | None = "utf-8") -> str:
    decl = f'<?xml version="1.0" encoding="{encoding}"?>' if encoding else ""
    return (f'{decl}<rss version="2.0"><channel><title>{title}</title>'
            f"<item><title>{title}</title><link>http://x.example/1</link></item></channel></rss>")


def test_header_charset_counts_when_the_document_names_none() -> None:
    content = rss("中文标题", encoding=None).encode("gbk")
    feed = parse_feed(content, url=URL, content_type="application/rss+xml; charset=GB2312")
    assert feed.items[0].title == "中文标题"
    assert feed.warnings == ()


def test_headers_mapping_supplies_the_content_type() -> None:
    content = rss("Überschrift", encoding=None).encode("latin-1")
    feed = parse_feed(content, url=URL, headers={"content-type": "text/xml; charset=iso-8859-1"})
    assert feed.title == "Überschrift"


def test_declaration_beats_a_wrong_header_charset() -> None:
    content = rss("Überschrift").encode("utf-8")
    feed = parse_feed(content, url=URL, content_type="text/xml; charset=iso-8859-1")
    assert feed.title == "Überschrift"


def test_utf8_with_a_few_broken_bytes_keeps_its_text() -> None:
    content = rss("Grüße aus Köln " * 200).encode("utf-8").replace(b"Gr", b"Gr\xff", 1)
    feed = parse_feed(content, url=URL)
    assert "Köln" in feed.title
    assert any("not valid UTF-8" in w for w in feed.warnings)


def test_utf16_with_bom() -> None:
    content = rss("UTF-16 feed", encoding="utf-16").encode("utf-16")
    assert parse_feed(content, url=URL).items[0].title == "UTF-16 feed"


def test_external_entities_are_never_resolved(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    content = (f'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY x SYSTEM "file://{secret}">]>'
               '<rss version="2.0"><channel><title>t</title><item><title>a &x; b</title>'
               "</item></channel></rss>").encode()
    feed = parse_feed(content, url=URL)
    assert "TOPSECRET" not in json.dumps([i.title for i in feed.items])


def test_tag_soup_is_recovered() -> None:
    """Unclosed elements everywhere (feedparser finds no entry here at all)."""
    content = (b"<rss version='2.0'><channel><title>Soup<item><title>One<link>http://x.example/1"
               b"</item><item><title>Two</title><link>http://x.example/2</link></item>")
    feed = parse_feed(content, url=URL)
    assert len(feed.items) == 2
    assert (feed.items[1].title, feed.items[1].url) == ("Two", "http://x.example/2")
    assert "parsed in recovery mode" in feed.warnings


def test_documents_lxml_cannot_recover_go_to_feedparser() -> None:
    content = b"<rss version='2.0'><channel><title>x</title></channel></rss>"
    assert parse_feed(content, url=URL).items == ()  # a valid empty feed stays empty
    soup = b"\x00<rss><channel><item><title>Only feedparser</title></item>"
    feed = parse_feed(soup, url=URL)
    assert [i.title for i in feed.items] == ["Only feedparser"]


def test_a_crash_inside_feedparser_leaves_the_lxml_reading() -> None:
    """Found by fuzzing: feedparser's own width handler calls int(None) here, and
    the fallback runs because lxml's recovery found no entry."""
    soup = b"<rss><channel><title>Kept</title><image></width></image></channel></rss"
    feed = parse_feed(soup, url=URL)
    assert (feed.items, feed.title) == ((), "Kept")
    assert "parsed in recovery mode" in feed.warnings


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        parse_feed(data, url=URL)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=2000), st.sampled_from(sorted(DATA.glob("*.xml"))))
def test_truncated_feeds_never_crash(cut: int, path: Path) -> None:
    with contextlib.suppress(ParseError):
        parse_feed(path.read_bytes()[:cut], url=URL)


def test_gzip_bytes_are_not_a_feed() -> None:
    """The fetcher decompresses; a still-compressed body is reported, not misread."""
    with pytest.raises(ParseError, match="not a feed"):
        parse_feed(gzip.compress(rss("x").encode()), url=URL)


# ----------------------------------------------------------------------- ids as links


def _rss_entry(inner: str) -> bytes:
    return (f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>'
            f"<item><title>A</title>{inner}</item></channel></rss>").encode()


def _atom_entry(inner: str) -> bytes:
    return (f'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>'
            f"<entry><title>A</title>{inner}</entry></feed>").encode()


def _json_entry(item: dict[str, str]) -> bytes:
    return json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "T",
                       "items": [{"title": "A", "content_text": "x", **item}]}).encode()


ID_LINKS = [
    (_rss_entry("<guid>https://e.com/p#1</guid>"), "https://e.com/p#1"),
    (_rss_entry("<guid>/p/1</guid>"), "http://x.example/p/1"),  # a relative permalink
    (_rss_entry('<guid isPermaLink="false">https://e.com/p#1</guid>'), None),
    (_rss_entry("<link>https://e.com/a</link><guid>https://e.com/p</guid>"), "https://e.com/a"),
    (_atom_entry("<id>https://e.com/now.html#2026-02-16 Title</id>"),
     "https://e.com/now.html#2026-02-16%20Title"),
    (_atom_entry("<id>tag:e.com,2026:1</id>"), None),
    (_atom_entry("<id>urn:uuid:60a76c80-d399-11d9-b93c-0003939e0af6</id>"), None),
    (_atom_entry('<id>https://e.com/p</id><link href="https://e.com/a"/>'), "https://e.com/a"),
    (_json_entry({"id": "https://e.com/p/1"}), "https://e.com/p/1"),
    (_json_entry({"id": "123"}), None),  # not resolved against the feed's URL
    (_json_entry({"id": "https://e.com/p/1", "url": "https://e.com/a"}), "https://e.com/a"),
]


@pytest.mark.parametrize(("content", "url"), ID_LINKS)
def test_an_entry_without_a_link_is_opened_by_an_id_that_is_a_url(
    content: bytes, url: str | None,
) -> None:
    """RSS follows isPermaLink; an Atom or JSON Feed id counts when it is an http(s) URL."""
    [item] = parse_feed(content, url=URL).items
    assert item.url == url


# ----------------------------------------------------------------------- real-world corpus


def corpus(shared_dir: Path) -> list[dict[str, Any]]:
    folder = shared_dir / "eval" / "feeds"
    entries: list[dict[str, Any]] = json.loads((folder / "manifest.json").read_text())
    for e in entries:
        e["path"] = folder / e["file"]
    return entries


REFERENCE = DATA / "reference" / "feedparser_reference.json"
REGEN = os.environ.get("TIDINGS_REGEN_GOLDEN") == "1"


def feedparser_view(data: bytes) -> dict[str, Any]:
    parsed: Any = feedparser.parse(data)
    return {
        "bozo": bool(parsed.bozo),
        "entries": len(parsed.entries),
        "titled": [bool(e.get("title", "").strip()) for e in parsed.entries],
        "linked": [bool(e.get("link")) for e in parsed.entries],
    }


def reference(shared_dir: Path) -> dict[str, dict[str, Any]]:
    """feedparser's view of each corpus file, recorded (feedparser needs ~10 s for all)."""
    entries = corpus(shared_dir)
    if REGEN:
        recorded = {e["file"]: {"sha256": e["sha256"], **feedparser_view(e["path"].read_bytes())}
                    for e in entries}
        REFERENCE.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    recorded = json.loads(REFERENCE.read_text())
    for e in entries:
        assert recorded[e["file"]]["sha256"] == e["sha256"], "corpus changed: regenerate"
    return recorded


def check_against(view: dict[str, Any], name: str, data: bytes) -> list[tuple[str, int, int]]:
    feed = parse_feed(data, url=f"https://example.org/{name}")
    for mine, titled, linked in zip(feed.items, view["titled"], view["linked"], strict=False):
        if titled:
            assert mine.title, name
        if linked and not view["bozo"]:
            assert mine.url, name
        assert mine.url is None or mine.url.startswith(("http://", "https://"))
        assert len(mine.images) <= 6
        assert mine.published_at is None or mine.published_at.utcoffset() is not None
    if not view["bozo"] and view["entries"] != len(feed.items):
        return [(name, len(feed.items), view["entries"])]
    return []


def test_real_world_feeds_parse_like_feedparser(shared_dir: Path) -> None:
    """No crash; titles and links where the file has them; same entry count as feedparser."""
    recorded = reference(shared_dir)
    mismatches = []
    for entry in corpus(shared_dir):
        mismatches += check_against(recorded[entry["file"]], entry["file"],
                                    entry["path"].read_bytes())
    assert mismatches == []


@pytest.mark.slow
def test_real_world_feeds_against_live_feedparser(shared_dir: Path) -> None:
    """The same comparison with feedparser run now (catches a feedparser upgrade)."""
    mismatches = []
    for entry in corpus(shared_dir):
        data = entry["path"].read_bytes()
        mismatches += check_against(feedparser_view(data), entry["file"], data)
    assert mismatches == []


def test_real_world_bozo_feeds_still_yield_entries(shared_dir: Path) -> None:
    broken = [e for e in corpus(shared_dir) if not e["well_formed"]]
    assert broken, "the corpus should contain malformed feeds"
    for entry in broken:
        feed = parse_feed(entry["path"].read_bytes(), url="https://example.org/feed")
        assert feed.items, entry["file"]
        assert feed.warnings, entry["file"]
