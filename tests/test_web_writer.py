"""The web reader keeps answering while the writer is busy (one write path, issue "Refit the core").

Every write of the process is a step on one writer thread; the web server's event
loop only awaits it. Here a write step holds the writer for seconds (as a long
collection commit or an index batch could) while a real uvicorn server is asked
for lists, an article and the health endpoint: they answer at once, and a click
on "mark as read" waits for the writer without holding anyone else up.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from test_web_auth import PASSWORD
from test_web_sessions import log_in
from test_web_support import (
    Clock,
    ServerThread,
    Spec,
    add_items,
    add_source,
    open_archive,
    serve_web,
    store_password,
    wait_until,
    write,
)
from tidings.app import Tidings
from tidings.settings import Settings
from tidings.store.base import Unit
from tidings.web import auth

HOLD_S = 2.0


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[Tidings, ServerThread, list[int]]]:
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha News")
    ids = add_items(tid, [Spec(f"Story {n}") for n in range(30)])
    write(tid, lambda unit: unit.index_pending(1000))  # a search then needs no write first
    server = serve_web(tid, settings)
    yield tid, server, ids
    server.stop()
    tid.close()


def _hold(gate: threading.Event, held: threading.Event) -> Callable[[Unit], None]:
    """A write step that keeps the writer (and its transaction) until ``gate`` opens."""
    def step(unit: Unit) -> None:
        held.set()
        gate.wait(HOLD_S * 3)

    return step


def test_pages_answer_while_a_write_holds_the_writer(
    served: tuple[Tidings, ServerThread, list[int]],
) -> None:
    tid, server, ids = served
    gate, held = threading.Event(), threading.Event()
    with httpx.Client(base_url=server.url, timeout=10) as client, \
            ThreadPoolExecutor(2) as pool:
        page = client.get("/all")
        token = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert token
        blocker = pool.submit(write, tid, _hold(gate, held))  # a long write transaction
        assert held.wait(5), "the writer thread runs the long step"
        click = pool.submit(client.post, "/mark-read",
                            data={"ids": str(ids[0]), "csrf": token.group(1)})
        for path in ("/healthz", "/all", f"/item/{ids[1]}", "/sources", "/api/v1/items",
                     "/search?q=story"):
            response = client.get(path)
            assert response.status_code == 200, path
            # the writer is held until the gate opens: a read that waited for it would
            # have timed out rather than answered
            assert not blocker.done(), f"{path} answered only after the writer's step"
        assert not click.done(), "the write waits for the writer, but nobody else does"
        assert not tid.item(ids[0]).read
        gate.set()
        assert click.result(timeout=10).status_code == 303
        blocker.result(timeout=10)
    assert tid.item(ids[0]).read


def test_a_session_due_for_its_touch_does_not_wait_for_the_writer(settings: Settings) -> None:
    """Every few minutes a reader's session is written as seen: the page does not wait."""
    clock = Clock()
    tid = Tidings.open(settings, create=True, clock=clock)
    add_source(tid, "alpha", "Alpha News")
    add_items(tid, [Spec(f"Story {n}") for n in range(30)])
    store_password(tid, PASSWORD)
    server = serve_web(tid, settings)
    gate, held = threading.Event(), threading.Event()
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client, \
                ThreadPoolExecutor(1) as pool:
            log_in(client)
            (session,) = tid.access.sessions()
            clock.advance(minutes=auth.TOUCH_EVERY.total_seconds() / 60)
            blocker = pool.submit(write, tid, _hold(gate, held))
            assert held.wait(5), "the writer thread runs the long step"
            page = client.get("/all")
            # the writer stays held until the gate opens below: a page that waited for
            # it would time out instead of answering
            assert not blocker.done(), "the page came back only after the writer's step"
            assert page.status_code == 200 and "Story 29" in page.text
            assert page.cookies.get(auth.SESSION_COOKIE) == client.cookies[auth.SESSION_COOKIE]
            assert tid.access.sessions() == [session], "the touch waits for the writer"
            gate.set()
            blocker.result(timeout=10)
            wait_until(lambda: tid.access.sessions()[0].last_seen_at == clock.now)
            (seen,) = tid.access.sessions()
            assert seen.last_seen_at == clock.now
            assert seen.expires_at == clock.now + auth.SESSION_LIFETIME
    finally:
        gate.set()
        server.stop()
        tid.close()
