"""OPML as other readers write it (issue 29 item 7): fixtures in the shape of the
exports of Miniflux, FreshRSS, Feedly, Inoreader and NetNewsWire (written here, see
tests/data/opml), and an outliner's nested folders. Each is parsed with what it means
(folders as paths, a raw & recovered, FreshRSS's scraping sources skipped with the
reason), imported, exported, and imported into a fresh archive: nothing lost, nothing
doubled."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from test_web_support import run
from tidings.app import Tidings
from tidings.errors import ParseError
from tidings.opml import parse_opml
from tidings.settings import Settings

DATA = Path(__file__).parent / "data" / "opml"

EXPECTED: dict[str, list[tuple[str, str, str]]] = {
    "miniflux": [("https://alpha.example/feed.xml", "Alpha Notes", "All"),
                 ("https://beta.example/rss?a=1&b=2", "Beta Daily", "News & Views"),
                 ("https://gamma.example/atom.xml", "Gamma & Co", "News & Views")],
    "freshrss": [("https://delta.example/feed/", "Delta Dev", "Tech"),
                 ("https://zeta.example/index.xml", "Zeta Weekly", "Uncategorized")],
    "feedly": [("https://theta.example/feed", "Theta Type", "Design"),
               ("https://iota.example/rss.xml", "Iota Studio", "Design")],
    "inoreader": [("https://kappa.example/feed.atom", "Kappa Lab", "Science"),
                  ("https://lambda.example/rss", "Lambda Log", "")],
    "netnewswire": [("https://mu.example/feed.json", "Mu Blog", ""),
                    ("https://nu.example/rss", "Nu Notes", "Apple")],
    "nested": [("https://xi.example/feed", "Xi Weekly", "Tech/Rust"),
               ("https://omicron.example/feed", "Omicron", "Tech/Rust/Async"),
               ("https://pi.example/feed", "Pi Tech", "Tech"),
               ("https://rho.example/feed", "Rho", "News/World")],
}
SKIPPED = {
    "miniflux": ["a raw & read as &amp;"],
    "freshrss": ["'Epsilon Board': a FreshRSS web-scraping source (HTML+XPath)",
                 "'Eta JSON': a FreshRSS web-scraping source (JSON+DotNotation)"],
    "feedly": ["https://theta.example/feed is listed twice"],
    "inoreader": ["'Empty folder': no xmlUrl"],
    "netnewswire": [], "nested": [],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_export_reads_as_it_means(name: str) -> None:
    notes: list[str] = []
    feeds = parse_opml((DATA / f"{name}.opml").read_bytes(), name, skipped=notes)
    assert [(f.url, f.title, f.category) for f in feeds] == EXPECTED[name]
    assert len(notes) == len(SKIPPED[name])
    for expected, note in zip(SKIPPED[name], notes, strict=True):
        assert expected in note, note
    if name == "freshrss":  # the page to add instead is named
        assert "tidings add https://epsilon.example/board" in notes[0]


def test_a_file_broken_otherwise_is_still_an_error() -> None:
    with pytest.raises(ParseError, match="not valid XML"):
        parse_opml(b"<opml><body><outline text='a & b'></body></opml>")


async def _sources(settings: Settings, data: bytes) -> tuple[set[tuple[str, str, str]], str]:
    tid = Tidings.open(settings, create=True)
    try:
        added, present = await tid.transfer.import_opml(data)
        assert present == 0
        again = await tid.transfer.import_opml(data)  # a second import doubles nothing
        assert again[0] == []
        got = {(s.url, s.title or "", s.folder or "") for s in tid.sources.all()}
        assert len(got) == len(added)
        return got, tid.transfer.export_opml()
    finally:
        await tid.aclose()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_import_export_import_loses_and_doubles_nothing(name: str, settings: Settings,
                                                        tmp_path: Path) -> None:
    first, exported = run(lambda: _sources(settings, (DATA / f"{name}.opml").read_bytes()))
    assert first == set(EXPECTED[name])
    fresh = replace(settings, data_dir=tmp_path / "fresh")
    second, _ = run(lambda: _sources(fresh, exported.encode()))
    assert second == first
