"""A real Google Reader client against tidings: newsboat (``urls-source "feedhq"``).

newsboat logs in with ``POST {base}/accounts/ClientLogin``, lists
``reader/api/0/subscription/list``, downloads each subscription as the Atom stream
``reader/atom/feed%2F<id>?n=N`` (unread state from the ``gr`` labels ``fresh`` /
``read``), and marks an opened article read and a flagged one starred with
``edit-tag``. ``newsboat -x reload`` fills its cache (SQLite, read here); the
marking is driven through tmux, keys as a person presses them. Outside CI, a
machine without newsboat or tmux skips with the install hint; in CI ``.ci/run``
installs both.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from conftest import IN_CI
from test_web_support import (
    ServerThread,
    Spec,
    add_items,
    add_source,
    new_token,
    open_archive,
    run,
    serve_web,
    store_password,
    wait_until,
)
from tidings.app import ItemQuery, SourceUpdate, Tidings
from tidings.model import Visibility
from tidings.settings import Settings

MISSING = [tool for tool in ("newsboat", "tmux") if shutil.which(tool) is None]
pytestmark = pytest.mark.skipif(bool(MISSING) and not IN_CI, reason=(
    f"{' and '.join(MISSING)} missing: apt-get install newsboat tmux (.ci/run does)"))


@pytest.fixture
def setup(settings: Settings, tmp_path: Path) -> Iterator[tuple[Tidings, ServerThread, Path]]:
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha news")
    add_source(tid, "beta", "Beta notes")
    add_source(tid, "hidden", "Hidden", visibility=Visibility.ISOLATED)
    run(lambda: tid.sources.update("alpha", SourceUpdate(folder="Tech")))
    add_items(tid, [Spec(f"Alpha story {i}", source_id="alpha", age=timedelta(minutes=i))
                    for i in range(5)])
    add_items(tid, [Spec(f"Beta note {i}", source_id="beta", age=timedelta(hours=1 + i))
                    for i in range(3)])
    add_items(tid, [Spec("Hidden thing", source_id="hidden")])
    store_password(tid, "a long password")
    already = tid.items.query(ItemQuery(source_id="beta"))[-1]
    run(lambda: tid.items.mark_read([already.id]))
    server = serve_web(tid, settings)
    home = tmp_path / "home"
    (home / ".newsboat").mkdir(parents=True)
    (home / "urls").write_text("")
    (home / "config").write_text(
        'urls-source "feedhq"\n'
        f'feedhq-url "{server.url}/api/greader"\n'
        'feedhq-login "admin"\n'
        f'feedhq-password "{new_token(tid, "newsboat")}"\n'
        "feedhq-show-special-feeds no\n"
        "feedhq-min-items 50\n"
        "download-retries 1\n"
        "show-read-feeds yes\n"
        "show-read-articles yes\n"
        "confirm-exit no\n"
        'feedhq-flag-star "s"\n')
    yield tid, server, home
    server.stop()
    tid.close()


def newsboat(home: Path, *args: str) -> list[str]:
    return ["newsboat", "-C", str(home / "config"), "-u", str(home / "urls"),
            "-c", str(home / "cache.db"), *args]


def env(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home), "TERM": "xterm-256color", "LANG": "C.UTF-8",
            "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local")}


def cached(home: Path) -> dict[str, tuple[str, int]]:
    """title -> (guid, unread) as newsboat keeps them."""
    with sqlite3.connect(home / "cache.db") as db:
        rows = db.execute("SELECT title, guid, unread FROM rss_item WHERE deleted = 0")
        return {r[0]: (r[1], r[2]) for r in rows}


def test_newsboat_reloads_then_marks_read_and_stars_through_tmux(
        setup: tuple[Tidings, ServerThread, Path]) -> None:
    tid, _, home = setup
    done = subprocess.run(newsboat(home, "-x", "reload"), env=env(home), timeout=120,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    items = cached(home)
    assert set(items) == {f"Alpha story {i}" for i in range(5)} | {
        f"Beta note {i}" for i in range(3)}  # the isolated source's item is not there
    assert items["Alpha story 0"][0].startswith("tag:google.com,2005:reader/item/")
    assert [t for t, (_, unread) in items.items() if not unread] == ["Beta note 2"]

    session = f"tidings-nb-{os.getpid()}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "40",
                    " ".join(newsboat(home))], env=env(home), check=True)
    try:
        _wait_for_screen(session, "Alpha news")
        feed_order = _screen(session)
        # the feed list is sorted as newsboat likes; open the Alpha feed, then its first item
        down = 0 if feed_order.find("Alpha news") < feed_order.find("Beta notes") else 1
        for _ in range(down):
            _keys(session, "Down")
        _keys(session, "Enter")
        _wait_for_screen(session, "Alpha story")
        # opening an article marks it read, on the server too: newsboat (2.21) sends the
        # mark with its next request, here the star's (waiting for it before took 20 s)
        _keys(session, "Enter")
        _wait_for_screen(session, "Feed:")
        _keys(session, "C-e")  # edit the article's flags: "s" is the star (feedhq-flag-star)
        _keys(session, "s")
        _keys(session, "Enter")
        wait_until(lambda: any(i.starred for i in
                               tid.items.query(ItemQuery(source_id="alpha"))), 20)
        wait_until(lambda: any(i.read for i in tid.items.query(ItemQuery(source_id="alpha"))), 20)
        _keys(session, "q")
        _keys(session, "q")
        _keys(session, "q")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False,
                       capture_output=True)
    read_now = [i.title for i in tid.items.query(ItemQuery(source_id="alpha")) if i.read]
    assert len(read_now) == 1 and read_now[0].startswith("Alpha story")
    starred = [i.title for i in tid.items.query(ItemQuery(source_id="alpha")) if i.starred]
    assert starred == read_now  # starred in newsboat: edit-tag a=…/starred


def test_newsboat_sees_what_was_read_in_tidings(
        setup: tuple[Tidings, ServerThread, Path]) -> None:
    tid, _, home = setup
    first = tid.items.query(ItemQuery(source_id="alpha"))[0]
    run(lambda: tid.items.mark_read([first.id]))
    done = subprocess.run(newsboat(home, "-x", "reload"), env=env(home), timeout=120,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert cached(home)[first.title][1] == 0 and cached(home)["Alpha story 1"][1] == 1


def _screen(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True,
                          text=True, check=False).stdout


def _wait_for_screen(session: str, text: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while text not in _screen(session):
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} never showed:\n{_screen(session)}")
        time.sleep(0.2)


def _keys(session: str, *keys: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", session, *keys], check=True)
    time.sleep(0.3)


def _documented_config(url: str, token: str) -> str:
    """The newsboat config of docs/api.md, as a user copies it."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "api.md").read_text("utf-8")
    block = text.split("**newsboat**", 1)[1].split("```", 2)[1]
    return (block.replace("https://your.host/api/greader", url).replace('"tdg_…"', f'"{token}"')
            + "download-retries 1\nconfirm-exit no\n")


def test_the_documented_config_gets_every_unread_item(settings: Settings,
                                                      tmp_path: Path) -> None:
    """Feeds holding far more than newsboat's default 20 items, some read: with the
    config of docs/api.md every unread item arrives, unread, and no read one as unread."""
    tid = open_archive(settings)
    sizes = {"alpha": 640, "beta": 410, "gamma": 35}
    for sid, size in sizes.items():
        add_source(tid, sid, sid.title())
        add_items(tid, [Spec(f"{sid} {i}", source_id=sid, age=timedelta(minutes=i))
                        for i in range(size)])
    read = [i.id for i in tid.items.query(ItemQuery(source_id="alpha", limit=1000))[::7]]
    run(lambda: tid.items.mark_read(read))
    unread = {i.title for i in tid.items.query(ItemQuery(unread_only=True, limit=5000))}
    server = serve_web(tid, settings)
    home = tmp_path / "home"
    (home / ".newsboat").mkdir(parents=True)
    (home / "urls").write_text("")
    (home / "config").write_text(_documented_config(f"{server.url}/api/greader",
                                                    new_token(tid, "newsboat")))
    try:
        done = subprocess.run(newsboat(home, "-x", "reload"), env=env(home), timeout=300,
                              capture_output=True, text=True, check=False)
    finally:
        server.stop()
        tid.close()
    assert done.returncode == 0, done.stderr
    items = cached(home)
    arrived = {title for title, (_, flag) in items.items() if flag}
    assert len(unread) == sum(sizes.values()) - len(read) == 993
    assert arrived == unread  # every unread item, and only those, unread in newsboat
    assert len(items) == sum(sizes.values())
