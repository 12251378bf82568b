"""Helpers for the web tests (no tests here): archives with items, a real server.

Items are written with the store API (``apply_upserts``, a step of the writer), bodies through
the real sanitizer, fingerprints through the real identity code, so the pages
are tested on exactly what the pipeline would have stored.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import threading
import time
from collections.abc import Callable, Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import uvicorn

from tidings.app import Tidings
from tidings.extract import sanitize_html
from tidings.identity import title_fingerprint
from tidings.model import BodyState, Source, SourceKind, Visibility
from tidings.settings import Settings
from tidings.store.base import ItemFields, NewItem, Unit, UpsertBatch
from tidings.web import auth, create_app

T = TypeVar("T")

NOW = datetime.now(UTC).replace(microsecond=0)
_keys = itertools.count(1)


class Clock:
    """The archive's clock, moved by the test (sessions expire by it)."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def open_archive(settings: Settings) -> Tidings:
    return Tidings.open(settings, create=True)


def run(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine of the facade to its end from a plain test function (which may run
    inside Playwright's own event loop, hence a loop on a thread of its own)."""
    with ThreadPoolExecutor(1) as pool:
        result: T = pool.submit(lambda: asyncio.run(make())).result()
    return result


def write(tid: Tidings, step: Callable[[Unit], T]) -> T:
    """One write step through the archive's writer, from a plain test function."""
    return run(lambda: tid.write(step))


def store_password(tid: Tidings, password: str) -> None:
    """What `tidings set-password` does: a new password, every session logged out."""
    run(lambda: tid.users.set_password(password))


def new_token(tid: Tidings, name: str) -> str:
    """Create an API token as the settings page does; returns its value."""
    token_id, value, digest = auth.new_token()
    run(lambda: tid.tokens.add(token_id, name, digest))
    return value


def add_source(tid: Tidings, sid: str, title: str = "", *,
               visibility: Visibility = Visibility.EDITORIAL, url: str | None = None) -> Source:
    source = Source(
        id=sid, kind=SourceKind("rss"), url=url or f"https://{sid}.example/feed.xml",
        title=title or sid.title(), visibility=visibility, created_at=NOW, next_fetch_at=NOW,
    )
    return write(tid, lambda unit: unit.add_source(source))


@dataclass
class Spec:
    title: str
    source_id: str = "alpha"
    age: timedelta = timedelta(hours=1)
    body: str | None = "<p>Body text.</p>"
    url: str | None = None
    author: str = ""
    backfill: bool = False
    body_state: BodyState = BodyState.OK
    summary: str = ""
    raw: dict[str, Any] = field(default_factory=dict)
    #: how long ago it was stored; None: a minute after it was published
    arrived_age: timedelta | None = None


def add_items(tid: Tidings, specs: Iterable[Spec]) -> list[int]:
    """Store the items; returns their ids in the order given."""
    creates = []
    for spec in specs:
        n = next(_keys)
        url = spec.url if spec.url is not None else f"https://{spec.source_id}.example/p/{n}"
        fields = ItemFields(
            title=spec.title, url=url, summary=spec.summary,
            body=sanitize_html(spec.body, base_url=url if url.startswith("http") else None)
            if spec.body else None,
            body_state=spec.body_state, published_at=NOW - spec.age, author=spec.author,
            raw=spec.raw, content_hash=f"h{n}", title_fp=title_fingerprint(spec.title),
        )
        creates.append(NewItem(key=f"test:{n}", source_id=spec.source_id, fields=fields,
                               discovered_at=NOW - (spec.age - timedelta(minutes=1)
                                                    if spec.arrived_age is None
                                                    else spec.arrived_age),
                               backfill=spec.backfill))
    ids = write(tid, lambda unit: unit.apply_upserts(UpsertBatch(creates=creates)))
    return [ids[c.key] for c in creates]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class ServerThread:
    """uvicorn serving ``app`` on 127.0.0.1 in a thread; can stop and start again."""

    def __init__(self, app: Any, port: int | None = None) -> None:
        self.app = app
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> ServerThread:
        config = uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning",
                                lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(10)
            self._server = None


def wait_until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    """Return once ``check()`` holds, or after ``timeout`` seconds (the caller asserts).

    For what the server writes after it has answered, such as a session's "last seen".
    """
    deadline = time.monotonic() + timeout
    while not check() and time.monotonic() < deadline:
        time.sleep(0.01)


def serve_web(tid: Tidings, settings: Settings, port: int | None = None) -> ServerThread:
    """The reader of ``tid`` served on 127.0.0.1, its page cache off (every answer fresh)."""
    return ServerThread(create_app(tid, settings, page_ttl=0), port).start()
