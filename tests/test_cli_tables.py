"""Every listing of the command line at 80 and 200 columns in a real terminal, and
piped (issue 32): the reason wraps (under its row when the row leaves too little
room), a URL is shown once and never cut, piped rows are whole tab-separated lines.

The terminal is a pseudo-terminal of the given size, so the command measures it
as it measures a person's.
"""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import tempfile
import termios
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rich.cells import cell_len

from test_crawl_cli import blogs  # noqa: F401 (the fixture: four tiny blogs)
from test_web_support import Spec, add_items, add_source, open_archive, write
from tidings.cli.tables import Column, render
from tidings.model import RunCounts, RunOutcome
from tidings.settings import Settings
from tidings.store.base import Unit

ENV = {**{k: v for k, v in os.environ.items()
          if k not in ("COLUMNS", "LINES") and not k.startswith("TIDINGS_")},
       "TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.0/8", "TIDINGS_PER_HOST_DELAY": "0"}
LONG_URL = ("https://a-rather-long-host-name.example.org/blog/category/engineering/"
            "feeds/atom/all-posts.xml")
REASON = ("cannot connect to a-rather-long-host-name.example.org:443 (connection refused) "
          "after 3 tries; the host may be down or moved")
TITLE = ("A title long enough to need two lines at eighty columns: 数据库全文检索 "
         "and the whole story of it")


def run(data: Path, args: list[str], width: int | None) -> str:
    """The command's stdout in a terminal ``width`` columns wide, or piped (None)."""
    cmd = [sys.executable, "-m", "tidings", "--data", str(data), *args]
    if width is None:
        done = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, width, 0, 0))
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=follower, stderr=err, stdin=subprocess.DEVNULL,
                                env=ENV)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the command ended and closed its side
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        err.seek(0)
        assert proc.wait(120) == 0, err.read()
    return b"".join(chunks).decode().replace("\r\n", "\n")


@pytest.fixture
def archive(settings: Settings) -> Iterator[Path]:
    """Sources (one failing with a long reason, its URL long too), items with a long
    title, a folder."""
    tid = open_archive(settings)
    add_source(tid, "short", "Short", url="https://short.example/feed.xml")
    add_source(tid, "engineering-blog", "Engineering", url=LONG_URL)
    add_items(tid, [Spec(TITLE, source_id="short"), Spec("Brief", source_id="short")])
    now = datetime.now(UTC)

    def runs(unit: Unit) -> None:
        for sid, counts in (("short", RunCounts(RunOutcome.OK, created=2)),
                            ("engineering-blog", RunCounts(RunOutcome.FAILED,
                                                           error=f"{LONG_URL}: {REASON}"))):
            run_id = unit.start_run(sid, now - timedelta(minutes=5))
            unit.finish_run(run_id, now - timedelta(minutes=4), counts)

    write(tid, runs)
    tid.close()
    yield settings.data_dir


def flat(text: str) -> str:
    return "".join(text.split())


def fits(out: str, width: int) -> None:
    assert out.strip(), "something is listed"
    for line in out.splitlines():
        assert cell_len(line) <= width, (width, line)


@pytest.mark.parametrize("width", [80, 200, None])
def test_sources_reason_wraps_and_the_url_shows_once(archive: Path, width: int | None) -> None:
    out = run(archive, ["sources"], width)
    assert flat(LONG_URL) not in flat(out), "the id names the source; its URL is not repeated"
    if width is None:
        rows = [line.split("\t") for line in out.splitlines()]
        assert [len(r) for r in rows] == [7, 7], out
        failing = next(r for r in rows if r[0] == "engineering-blog")
        assert failing[6] == f"{REASON} (failed)", "whole, on one line"
        return
    fits(out, width)
    assert flat(f"{REASON} (failed)") in flat(out), "never cut"
    lines = out.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("engineering-blog"))
    if width == 80:  # too little room beside the row: the reason goes under it
        assert lines[row + 1].startswith("    cannot connect"), out
        assert lines[1] == "    last run", "the header has the rows' shape"
    else:
        assert "cannot connect" in lines[row] and lines[row].endswith("(failed)"), out


@pytest.mark.parametrize("width", [80, 200, None])
@pytest.mark.parametrize("command", [["items"], ["search", "title"]])
def test_items_and_search_titles_wrap_whole(archive: Path, command: list[str],
                                            width: int | None) -> None:
    out = run(archive, command, width)
    if width is None:
        rows = [line.split("\t") for line in out.splitlines()]
        assert all(len(r) == 4 for r in rows), out
        assert TITLE in [r[3] for r in rows]
        return
    fits(out, width)
    assert flat(TITLE) in flat(out)
    assert out.splitlines()[0].split() == ["id", "when", "source", "title"]


@pytest.mark.parametrize("width", [80, 200, None])
def test_tokens_listing(archive: Path, width: int | None) -> None:
    run(archive, ["tokens", "add", "a phone with a rather long name for its token"], None)
    out = run(archive, ["tokens", "list"], width)
    if width is None:
        (row,) = [line.split("\t") for line in out.splitlines()]
        assert len(row) == 4 and row[2:] == ["never", "a phone with a rather long name for "
                                                       "its token"]
        return
    fits(out, width)
    assert out.splitlines()[0].split() == ["id", "created", "last", "used", "name"]
    assert "tdg_" not in out


@pytest.mark.parametrize("width", [80, 200, None])
def test_folders_listing(archive: Path, width: int | None) -> None:
    run(archive, ["config", "short", "--folder", "Reading list"], None)
    out = run(archive, ["folders"], width)
    if width is None:
        assert out == "Reading list\t1\n"
        return
    fits(out, width)
    assert out.splitlines()[1].split() == ["Reading", "list", "1"]


@pytest.mark.parametrize("width", [80, 200, None])
def test_crawl_results_and_discover_keep_the_feed_url_whole(
    tmp_path: Path, blogs: tuple[dict[str, str], Counter[str]],  # noqa: F811
    width: int | None,
) -> None:
    bases, _ = blogs
    run(tmp_path, ["crawl", bases["a"] + "/", "--depth", "1"], None)
    for args, feeds in ((["crawl", "--results"], 3), (["discover", bases["b"] + "/"], 1)):
        out = run(tmp_path, args, width)
        urls = [b + "/feed.xml" for b in bases.values() if flat(b + "/feed.xml") in flat(out)]
        assert len(urls) == feeds, (args, out)
        for url in urls:
            assert flat(out).count(flat(url)) == 1, "each feed URL once, whole"
        if width is None:
            assert all(url in out.split("\n")[n].split("\t") for n, url in
                       enumerate(sorted(urls, key=out.index))), "a whole field of its line"
            continue
        fits(out, width)
        if args[0] == "crawl":
            abstracts = [line for line in out.splitlines() if "writes about tea" in line]
            assert len(abstracts) == 3, "one line of abstract a find, not three"


def test_a_url_wider_than_the_terminal_is_folded_not_cut() -> None:
    columns = (Column("#", right=True), Column("type"), Column("feed", fold=True),
               Column("abstract", wide=True, lines=1))
    url = "https://example.org/" + "x" * 150 + "/feed.xml"
    out = render(columns, [["1", "rss", url, "An abstract " * 20]], 80)
    fits(out, 80)
    lines = out.splitlines()
    assert len(lines) == 2 + 3 + 1, "header, three lines of URL, the abstract's one"
    assert url in flat("".join(lines[2:5])) and lines[5].endswith("…")
    assert render(columns, [], 80) == "" and render(columns, [], None) == ""
    assert render(columns, [["1", "rss", "a\tb", "two\nlines"]], None) == \
        "1\trss\ta b\ttwo lines\n"
