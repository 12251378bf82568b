"""Storage: the Storage protocol and its implementations. All SQL lives here."""

from __future__ import annotations

from tidings.errors import ConfigError
from tidings.settings import Settings
from tidings.store.base import Storage

__all__ = ["Storage", "open_storage"]


def open_storage(settings: Settings) -> Storage:
    """The storage the settings name: SQLite in the data directory unless a URL is set."""
    url = settings.database_url.strip()
    if not url:
        from tidings.store.sqlite import SqliteStorage

        storage: Storage = SqliteStorage(settings.database_path)
        return storage
    if url.startswith(("postgresql://", "postgres://")):
        from tidings.store.postgres import PostgresStorage

        return PostgresStorage(url)
    raise ConfigError(f"database_url: unsupported database URL scheme in {url.split(':')[0]!r}"
                      " (use postgresql://… or leave it empty for SQLite)")
