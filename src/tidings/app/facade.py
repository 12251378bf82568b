"""The lifecycle object: one open archive, and the use cases that work on it.

``Tidings`` opens storage and closes it, holds the settings, the clock, the one
writer and the one guarded HTTP client of the process (``app/core.py``), and
hands them to the use cases, which are its attributes: ``tidings.sources``,
``tidings.items``, ``tidings.search``, ``tidings.collection``, ``tidings.users``
and the rest (see the ``__init__`` below; each is a module of ``tidings.app``).
The CLI and the web layer parse and render around these calls and never reach
below them (STYLE.md: cli/web import only ``tidings.app``, ``settings`` and
``model``).

Reads are plain methods. Every write is a coroutine: it is handed to the
process's one writer thread (``tidings.store.writer``), so the event loop that
serves web pages never waits for a database write, and the CLI runs the same
coroutines with ``asyncio.run``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from tidings.app.backups import Backups
from tidings.app.collection import Collection
from tidings.app.compat import Compat
from tidings.app.core import Clock, Core, utcnow
from tidings.app.crawling import Crawls
from tidings.app.folders import Folders
from tidings.app.ingest import Ingest
from tidings.app.items import Items
from tidings.app.navigation import Navigation
from tidings.app.paid import Paid
from tidings.app.probes import Probes
from tidings.app.reports import Reports
from tidings.app.review import Review
from tidings.app.search import Search
from tidings.app.sources import Sources
from tidings.app.stories import Stories
from tidings.app.tokens import Tokens
from tidings.app.transfer import Transfer
from tidings.app.users import Users
from tidings.app.websub import WebSub
from tidings.errors import ConfigError
from tidings.net import Fetcher
from tidings.pipeline.env import PipelineEnv
from tidings.schedule.watchdog import restart_in_place
from tidings.settings import Settings
from tidings.store import open_storage
from tidings.store.base import Storage, Unit


class Tidings:
    """One open archive for one process: see the module docstring."""

    def __init__(self, settings: Settings, store: Storage, *, clock: Clock = utcnow) -> None:
        self._core = core = Core(settings, store, clock)
        self._store = store  # the storage handle (maintenance, tests, cluster workers)
        self.sources = Sources(core)
        self.folders = Folders(core)
        self.items = Items(core)
        self.search = Search(core)
        #: the extraction review page's items, pages and retry (R-EXTRACT-6)
        self.review = Review(core)
        self.collection = Collection(core)
        #: doctor and preview: collecting without storing (R-OPS-5)
        self.probes = Probes(core)
        self.transfer = Transfer(core, self.sources)
        self.backups = Backups(core)
        self.reports = Reports(core)
        #: what the paid APIs cost (R-SCHED-3)
        self.paid = Paid(core)
        #: push ingest (R-INGEST)
        self.ingest = Ingest(core)
        #: the web reader's users, sessions and passwords, and their API tokens (R-API-6)
        self.users = Users(core)
        self.tokens = Tokens(core)
        #: the reader's sidebar: folders and sources with unread counts, mark read, undo
        self.navigation = Navigation(store, core.writer, clock)
        self.stories = Stories(store, core.writer, clock)
        #: what feeds out and the client APIs need beyond the JSON API (R-API-2/3)
        self.compat = Compat(store, core.writer, clock)
        #: the WebSub subscriber (R-RSS-8)
        self.websub = WebSub(store, core.writer, core.env, settings, clock)
        #: the blogroll crawler's crawls (R-DISC-3)
        self.crawls = Crawls(core, self.sources)

    @classmethod
    def open(cls, settings: Settings, *, create: bool = False, clock: Clock = utcnow) -> Tidings:
        """Open the archive in ``settings.data_dir``; with ``create`` make it if missing."""
        if not settings.database_url and not settings.database_path.exists() and not create:
            raise ConfigError(
                f"no archive in {settings.data_dir} (run `tidings init` first, "
                "or pass --data DIR / set TIDINGS_HOME)"
            )
        if create:
            settings.data_dir.mkdir(parents=True, exist_ok=True)
        return cls(settings, open_storage(settings), clock=clock)

    @property
    def settings(self) -> Settings:
        return self._core.settings

    @property
    def clock(self) -> Clock:
        """What every use case reads the time from (tests pass their own)."""
        return self._core.clock

    @property
    def fetcher(self) -> Fetcher:
        """The one guarded HTTP client of this process (shared politeness limits)."""
        return self._core.fetcher

    def use_fetcher(self, fetcher: Fetcher) -> None:
        """Fetch through ``fetcher`` from now on (an embedder's, or a test's with its own
        resolver); ``aclose`` closes it. Call before the first fetch."""
        self._core.use_fetcher(fetcher)

    def pipeline_env(self) -> PipelineEnv:
        """What the pipeline and the scheduler work with (storage to read, the writer)."""
        return self._core.env()

    async def write(self, step: Callable[[Unit], Any]) -> Any:
        """Run one write step of the caller's own (tests, maintenance scripts)."""
        return await self._core.writer(step)

    async def aclose(self) -> None:
        """Close the fetcher, finish queued writes and close storage."""
        await self._core.aclose()

    def close(self) -> None:
        """Finish queued writes and close storage (``aclose`` when a fetcher may be open)."""
        self._core.close()

    @staticmethod
    def restart() -> NoReturn:
        """Replace this process by a fresh one with the same command line (R-OPS-4)."""
        restart_in_place()
