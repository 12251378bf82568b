"""The cluster mode of the facade: ``tidings worker``, ``tidings status``, ``tidings migrate``.

A cluster is one PostgreSQL archive, any number of worker processes that collect
through its job queue, and readers (``tidings serve --no-collect``). The commands
reach it through these functions, never through storage or the scheduler directly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from tidings.app.facade import Tidings
from tidings.errors import ConfigError
from tidings.schedule import worker
from tidings.settings import Settings
from tidings.store.postgres import (
    QueueStatus,
    describe,
    ensure_queue_schema,
    is_postgres_url,
    queue_connector,
    queue_status,
)
from tidings.store.postgres._transfer import migrate_archive
from tidings.store.writer import Writer

__all__ = ["QueueStatus", "cluster_status", "migrate", "serve_worker"]


def _url(settings: Settings, what: str) -> str:
    if not is_postgres_url(settings.database_url):
        raise ConfigError(f"{what} needs a PostgreSQL archive: set database_url (or "
                          "TIDINGS_DATABASE_URL) to postgresql://…; the embedded SQLite "
                          "archive is collected by `tidings serve`")
    return settings.database_url.strip()


async def serve_worker(tidings: Tidings, concurrency: int) -> None:
    """Run this process as a cluster worker until SIGTERM / SIGINT."""
    url = _url(tidings.settings, "tidings worker")
    if concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    ensure_queue_schema(url)
    base = tidings.pipeline_env()
    store = tidings._store
    writers = [Writer(store) for _ in range(writer_threads(concurrency, store.writers))]
    try:
        await worker.run_worker([base, *(replace(base, writer=w) for w in writers)],
                                tidings.settings,
                                queue_connector(url, max_size=2 + concurrency // 8),
                                concurrency=concurrency, database=describe(url))
    finally:
        for writer in writers:
            writer.close()


def writer_threads(concurrency: int, writers: int) -> int:
    """Writer threads of a worker besides the facade's own: one per four concurrent
    jobs, as many as the storage runs side by side (``Storage.writers``)."""
    return max(0, min(writers - 1, max(1, concurrency // 4)))


def cluster_status(settings: Settings, now: datetime) -> QueueStatus:
    url = _url(settings, "tidings status")
    ensure_queue_schema(url)
    return queue_status(url, now)


def migrate(settings: Settings, target: str,
            progress: Callable[[str, int, int], None] | None = None) -> dict[str, int]:
    """Copy this archive to ``target`` (a postgresql:// URL, or a SQLite file path when
    this archive is PostgreSQL); resumable, counts checked."""
    source: str | Path = (settings.database_url.strip() if is_postgres_url(settings.database_url)
                          else settings.database_path)
    if not is_postgres_url(target) and not is_postgres_url(str(source)):
        raise ConfigError("migrate: copy a SQLite archive --to postgresql://…, or a "
                          "PostgreSQL archive --to a .sqlite3 file")
    if isinstance(source, Path) and not source.exists():
        raise ConfigError(f"migrate: no archive at {source}")
    return migrate_archive(source, target if is_postgres_url(target) else Path(target),
                           progress)
