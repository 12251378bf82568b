"""Per-app state: the facade, the access mode and secret, and the small caches pages share.

Lists are what people open most, and most of a list page's cost is the same
for every visitor with the same role; so rendered pages are kept for a short
time (``page_ttl`` seconds) and dropped at once whenever this process changes
anything (read, star, source edits bump ``generation``). New items from the
scheduler appear after at most ``page_ttl`` seconds. The per-session CSRF token
is filled into the cached bytes at response time, so no session ever sees
another's token.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TypeVar

import anyio
from jinja2 import Environment

from tidings.app import ArchiveStats, Sidebar, Tidings, check_password, hash_password
from tidings.errors import TidingsError
from tidings.model import SearchHit, Source
from tidings.settings import Settings
from tidings.web import auth
from tidings.web.render import make_env

T = TypeVar("T")
log = logging.getLogger("tidings.web")
CSRF_PLACEHOLDER = "@@tidings-csrf@@"
FIGURES_TTL = 5.0
ACCESS_TTL = 2.0
#: searches running at once, each on a thread of its own (the rest wait their turn)
SEARCH_THREADS = 2


@dataclass
class _Entry:
    body: bytes
    made_at: float
    generation: int


@dataclass
class PageCache:
    ttl: float
    size: int = 256
    generation: int = 0
    _entries: OrderedDict[tuple[str, ...], _Entry] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, key: tuple[str, ...]) -> bytes | None:
        if self.ttl <= 0:
            return None
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry.generation != self.generation or time.monotonic() - entry.made_at > self.ttl:
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return entry.body

    def put(self, key: tuple[str, ...], body: bytes, generation: int) -> None:
        if self.ttl <= 0 or generation != self.generation:
            return
        with self._lock:
            self._entries[key] = _Entry(body, time.monotonic(), generation)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def invalidate(self) -> None:
        with self._lock:
            self.generation += 1
            self._entries.clear()


class _Memo:
    """One value recomputed at most every ``ttl`` seconds (and on invalidate)."""

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self.value: object = None
        self.at = -1e9

    def get(self, make: Callable[[], T]) -> T:
        now = time.monotonic()
        if self.value is None or now - self.at > self.ttl:
            self.value = make()
            self.at = now
        return self.value  # type: ignore[return-value]

    def clear(self) -> None:
        self.value = None


class WebState:
    def __init__(self, tidings: Tidings, settings: Settings, page_ttl: float) -> None:
        self.tidings = tidings
        self.settings = settings
        self.env: Environment = make_env()
        self.pages = PageCache(ttl=page_ttl)
        # whole-archive counts cost a few table scans: the status bar may lag 5 s
        self._stats = _Memo(ttl=FIGURES_TTL)
        self._sources = _Memo(ttl=FIGURES_TTL)
        self._sidebars = {admin: _Memo(ttl=FIGURES_TTL) for admin in (False, True)}
        #: each role's sidebar as HTML, with the counts it was rendered from (web/sidebar.py)
        self.sidebar_html: dict[bool, tuple[Sidebar, str]] = {}
        self.login_failures: dict[str, deque[float]] = {}
        self._search_turns: anyio.CapacityLimiter | None = None  # made inside the loop
        self._env_hash = hash_password(settings.admin_password) \
            if settings.admin_password else ""
        # the mode is asked on every request; set-password in another process shows
        # within ACCESS_TTL (a session's logout or expiry is checked on every request)
        self._password_set = _Memo(ttl=ACCESS_TTL)
        self.csrf_secret = ""
        self._touching: set[str] = set()
        self._background: set[asyncio.Task[None]] = set()

    async def ready(self) -> None:
        """Before the first request: take over an older install's auth file, then load
        the secret CSRF tokens derive from (made by the first process to need it)."""
        if self.csrf_secret:
            return
        await self.tidings.users.import_legacy()
        self.csrf_secret = await self.tidings.users.secret(auth.CSRF_SECRET,
                                                           secrets.token_urlsafe(32))

    @property
    def has_password(self) -> bool:
        return bool(self._env_hash) or self._password_set.get(
            self.tidings.users.password_set)

    def password_ok(self, password: str) -> bool:
        """Slow on purpose (a KDF): call it off the event loop."""
        user = self.tidings.users.user()
        hashes = [h for h in (self._env_hash, user.password_hash if user else "") if h]
        return any(check_password(h, password) for h in hashes)

    def password_changed(self) -> None:
        self._password_set.clear()

    def touch(self, key: str, write: Callable[[], Awaitable[object]]) -> None:
        """Start ``write`` as a background task unless one for ``key`` is under way.

        In the background because the write queues for the one writer thread, which
        may be in the middle of a long commit: a page must not wait for bookkeeping.
        The requests a page sends at once, all finding their session due for a touch,
        write it once. A failed touch is only logged: "last seen" is not worth a
        failed page, and nobody awaits the task to see its error.
        """
        if key in self._touching:
            return
        self._touching.add(key)
        task = asyncio.get_running_loop().create_task(_touch(write))

        def done(finished: asyncio.Task[None]) -> None:
            self._touching.discard(key)
            self._background.discard(finished)

        self._background.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(done)

    @property
    def mode(self) -> str:
        if not self.has_password:
            return "open"
        return "public" if self.settings.public_reading else "private"

    async def search(self, text: str, *, ranked: bool, limit: int,
                     before: tuple[datetime, int] | None) -> list[SearchHit]:
        """``Tidings.search`` on a worker thread, at most ``SEARCH_THREADS`` at once.

        A search may take long, so it must not hold up the event loop the
        scheduler shares; but most of it is Python, so thirty threads searching
        at once only take turns at the GIL, with the loop among them waiting.
        Two at a time keep both cores busy (SQLite releases the GIL).
        """
        await self.tidings.search.index_recent()  # what was collected a moment ago is found too
        if self._search_turns is None:
            self._search_turns = anyio.CapacityLimiter(SEARCH_THREADS)
        return await anyio.to_thread.run_sync(
            partial(self.tidings.search.find, text, ranked=ranked, limit=limit, before=before),
            limiter=self._search_turns)

    # -- shared figures
    def stats(self) -> ArchiveStats:
        return self._stats.get(self.tidings.reports.stats)

    def sources(self) -> dict[str, Source]:
        return self._sources.get(lambda: {s.id: s for s in self.tidings.sources.all()})

    def sidebar(self, admin: bool, make: Callable[[], Sidebar]) -> Sidebar:
        """The sidebar's counts for the admin or for visitors (``web.sidebar`` makes them)."""
        return self._sidebars[admin].get(make)

    def source(self, source_id: str) -> Source | None:
        """One source from the shared map, looking again if it is new."""
        found = self.sources().get(source_id)
        if found is None:
            self._sources.clear()
            found = self.sources().get(source_id)
        return found

    def changed(self) -> None:
        """Something was written: drop every cached page and figure."""
        self.pages.invalidate()
        self._stats.clear()
        self._sources.clear()
        for memo in self._sidebars.values():
            memo.clear()


async def _touch(write: Callable[[], Awaitable[object]]) -> None:
    try:
        await write()
    except TidingsError as exc:
        log.warning("could not record a session's or token's use: %s", exc)
    except Exception:
        log.exception("recording a session's or token's use failed")
