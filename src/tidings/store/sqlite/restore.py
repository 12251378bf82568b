"""``tidings restore BACKUP``: check a backup, then put it in place of the archive.

The check comes first and touches nothing: the file must be an SQLite database
whose integrity check passes, that holds tidings' tables, and whose schema is
not newer than this tidings. Only then is the current archive kept aside (never
deleted) and the backup copied in through a partial file and a rename, so the
archive is always one whole database: the old one or the restored one. No
process may have the archive open meanwhile (``store.inuse``): a running
``tidings serve`` would go on with the renamed old file.
"""

from __future__ import annotations

import shutil
import sqlite3
from datetime import datetime
from pathlib import Path

from tidings.errors import ConfigError
from tidings.store import inuse
from tidings.store.sqlite._schema import MIGRATIONS

_TABLES = {"sources", "items", "fetch_runs"}


def check_backup(backup: Path) -> int:
    """The backup's item count when it can be restored; ConfigError saying why not."""
    if not backup.is_file():
        raise ConfigError(f"{backup}: no such backup file")
    try:
        conn = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise ConfigError(f"{backup}: cannot be opened ({exc})") from None
    try:
        (verdict,) = conn.execute("PRAGMA integrity_check(1)").fetchone()
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        items = conn.execute("SELECT count(*) FROM items").fetchone()[0] \
            if "items" in tables else 0
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"{backup}: not an SQLite archive ({exc})") from None
    finally:
        conn.close()
    if verdict != "ok":
        raise ConfigError(f"{backup}: damaged ({verdict}); choose another backup")
    missing = _TABLES - tables
    if missing:
        raise ConfigError(f"{backup}: not a tidings archive (no {', '.join(sorted(missing))})")
    if version > len(MIGRATIONS):
        raise ConfigError(f"{backup}: made by a newer tidings (schema {version}); upgrade first")
    return int(items)


def restore_backup(backup: Path, database: Path, now: datetime) -> Path | None:
    """Check ``backup`` and put a copy of it at ``database``; returns where the archive
    it replaced was kept (None when there was none)."""
    check_backup(backup)
    with inuse.exclusive(database, "restore"):  # no process may have the archive open
        partial = database.with_name(database.name + ".restoring")
        shutil.copyfile(backup, partial)
        kept = None
        if database.exists():
            kept = database.with_name(f"{database.name}.before-restore-{now:%Y%m%d-%H%M%S}")
            _checkpoint(database)
            database.replace(kept)
        for extra in ("-wal", "-shm"):
            Path(f"{database}{extra}").unlink(missing_ok=True)
        partial.replace(database)
    return kept


def _checkpoint(database: Path) -> None:
    """Fold the write-ahead log into the archive being set aside, so it is whole."""
    conn = sqlite3.connect(database)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
