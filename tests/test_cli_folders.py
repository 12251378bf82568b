"""Folders from the command line: set with add/config, listed, renamed, deleted; OPML keeps them."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from test_cli import run


def test_folders_are_set_listed_renamed_and_deleted(tmp_path: Path) -> None:
    run(tmp_path, "init", "--empty")
    run(tmp_path, "add", "--kind", "external", "one", "--folder", "Tech")
    run(tmp_path, "add", "--kind", "external", "two")
    run(tmp_path, "config", "two", "--folder", "Tech ")  # the same folder, spaces aside
    assert json.loads(run(tmp_path, "folders", "--json")) == [{"name": "Tech", "sources": 2}]
    assert run(tmp_path, "folders") == "Tech\t2\n"  # piped: the table as tab-separated lines
    assert "(2 sources)" in run(tmp_path, "folders", "rename", "Tech", "Reading")
    assert json.loads(run(tmp_path, "folders", "--json")) == [{"name": "Reading",
                                                               "sources": 2}]
    out = run(tmp_path, "folders", "rename", "Nope", "X", code=1)
    assert "Nope" in out
    run(tmp_path, "folders", "delete", "Reading")
    assert json.loads(run(tmp_path, "folders", "--json")) == []
    assert "no folders" in run(tmp_path, "folders")


def test_folders_differing_only_in_case_are_counted_apart(tmp_path: Path) -> None:
    """Storage keeps "News" and "news" as two folders (renamed and deleted apart):
    their counts are theirs too, not the sum of both."""
    run(tmp_path, "init", "--empty")
    run(tmp_path, "add", "--kind", "external", "one", "--folder", "News")
    run(tmp_path, "add", "--kind", "external", "two", "--folder", "news")
    run(tmp_path, "add", "--kind", "external", "three", "--folder", "news")
    listed = json.loads(run(tmp_path, "folders", "--json"))
    assert sorted((f["name"], f["sources"]) for f in listed) == [("News", 1), ("news", 2)]
    assert "(2 sources)" in run(tmp_path, "folders", "rename", "news", "Later")
    listed = json.loads(run(tmp_path, "folders", "--json"))
    assert sorted((f["name"], f["sources"]) for f in listed) == [("Later", 2), ("News", 1)]


def test_opml_round_trip_keeps_folders_set_on_the_command_line(tmp_path: Path) -> None:
    run(tmp_path, "init", "--empty")
    opml = tmp_path / "in.opml"
    opml.write_text('<?xml version="1.0"?><opml version="2.0"><head/><body>'
                    '<outline text="News"><outline type="rss" text="A" '
                    'xmlUrl="https://a.example/feed"/></outline></body></opml>')
    run(tmp_path, "import-opml", str(opml))
    sources = json.loads(run(tmp_path, "sources", "--json"))
    run(tmp_path, "config", sources[0]["id"], "--folder", "Daily")
    root = ET.fromstring(run(tmp_path, "export-opml"))
    daily = next(o for o in root.iter("outline") if o.get("text") == "Daily")
    assert [o.get("xmlUrl") for o in daily] == ["https://a.example/feed"]
