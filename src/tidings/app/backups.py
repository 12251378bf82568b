"""Backups of the archive: ``Tidings.backups`` makes them; checking and restoring one
work without an open archive (nothing may have the archive open while it is replaced).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from tidings.app.core import Core
from tidings.errors import ConfigError
from tidings.settings import Settings


class Backups:
    """See the module docstring."""

    def __init__(self, core: Core) -> None:
        self._core = core

    def make(self, backup_dir: Path | None = None) -> Path:
        """A consistent copy of the archive in ``backup_dir`` (default: ``backups`` in
        the data directory); older copies beyond the kept days and months go."""
        from tidings.store.backup import make_backup

        settings = self._core.settings
        target = backup_dir or settings.data_dir / "backups"
        return make_backup(self._core.store, target, self._core.clock(),
                           keep_daily=settings.backup_keep_daily,
                           keep_monthly=settings.backup_keep_monthly)


def check_backup(settings: Settings, backup: Path) -> int:
    """How many items ``backup`` holds, if it can be restored; ConfigError if not."""
    from tidings.store.sqlite.restore import check_backup as check

    _sqlite_only(settings)
    return check(backup)


def restore_backup(settings: Settings, backup: Path, now: datetime) -> Path | None:
    """Put a checked copy of ``backup`` in place of the archive (no process may have
    it open); returns where the replaced archive was kept."""
    from tidings.store.sqlite.restore import restore_backup as restore

    _sqlite_only(settings)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return restore(backup, settings.database_path, now)


def _sqlite_only(settings: Settings) -> None:
    if settings.database_url:
        raise ConfigError("restore works on the SQLite archive; restore a database server "
                          "with its own tools")
