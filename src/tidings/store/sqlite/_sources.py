"""Sources: the things we read, and the scheduler's claim on them."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from tidings.errors import ConfigError, NotFoundError
from tidings.model import Source
from tidings.store.base import PUSHED_KIND, SourceUpdate
from tidings.store.sql._base import marks, to_us
from tidings.store.sql.sources import (
    _COLUMNS,
    _FOLDER,
    _PROBE,
    _changed_params,
    _folder_name,
    _source_params,
    source_from_row,
)
from tidings.store.sqlite._db import Access


def _ensure_folder(conn: sqlite3.Connection, name: str | None) -> None:
    if name:
        conn.execute("INSERT OR IGNORE INTO folders (name) VALUES (?)", (name,))


def _check_free(conn: sqlite3.Connection, source: Source, own_id: str | None) -> None:
    if own_id is None and conn.execute(
            "SELECT 1 FROM sources WHERE id = ?", (source.id,)).fetchone():
        raise ConfigError(f"source id {source.id!r} is already taken")
    row = conn.execute("SELECT id FROM sources WHERE url = ?", (source.url,)).fetchone()
    if row and row[0] != own_id:
        raise ConfigError(f"source URL {source.url} is already used by source {row[0]!r}")


def _change(conn: sqlite3.Connection, source_id: str, update: SourceUpdate) -> None:
    try:
        params = _changed_params(update.changes())
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"source {source_id!r}: bad change ({exc})") from exc
    if "folder" in params:
        _ensure_folder(conn, params["folder"])
    if "url" in params:
        _check_free(conn, replace(_PROBE, id=source_id, url=params["url"]), source_id)
    assignments = ", ".join(f"{name} = ?" for name in params) or "id = id"
    if conn.execute(f"UPDATE sources SET {assignments} WHERE id = ?",  # noqa: S608
                    (*params.values(), source_id)).rowcount == 0:
        raise NotFoundError(f"source {source_id!r} not found")


class SourcesMixin(Access):

    def add_source(self, source: Source) -> Source:
        if not source.id:
            raise ConfigError("a source needs a non-empty id")
        with self._write() as conn:
            _check_free(conn, source, None)
            params = _source_params(source)
            _ensure_folder(conn, params[_FOLDER])
            conn.execute(f"INSERT INTO sources ({_COLUMNS}) VALUES ({marks(len(params))})",  # noqa: S608
                         params)
            return self._get_source(conn, source.id)

    @staticmethod
    def _get_source(conn: sqlite3.Connection, source_id: str) -> Source:
        row = conn.execute(f"SELECT {_COLUMNS} FROM sources WHERE id = ?",  # noqa: S608
                           (source_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"source {source_id!r} not found")
        return source_from_row(row)

    def get_source(self, source_id: str) -> Source:
        with self._read() as conn:
            return self._get_source(conn, source_id)

    def find_source_by_url(self, url: str) -> Source | None:
        with self._read() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM sources WHERE url = ?",  # noqa: S608
                               (url,)).fetchone()
            return None if row is None else source_from_row(row)

    def list_sources(self) -> list[Source]:
        with self._read() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM sources ORDER BY id").fetchall()  # noqa: S608
        return [source_from_row(r) for r in rows]

    def update_source(self, source_id: str, update: SourceUpdate) -> Source:
        """Write the changed columns only: every run of a round ends here, and the cursor
        (validators, listing memory) is the one large column."""
        with self._write() as conn:
            _change(conn, source_id, update)
            return self._get_source(conn, source_id)

    def change_source(self, source_id: str, update: SourceUpdate) -> None:
        with self._write() as conn:
            _change(conn, source_id, update)

    def delete_source(self, source_id: str) -> None:
        with self._write() as conn:
            if conn.execute("DELETE FROM sources WHERE id = ?", (source_id,)).rowcount == 0:
                raise NotFoundError(f"source {source_id!r} not found")

    def list_folders(self) -> list[str]:
        with self._read() as conn:
            return [r[0] for r in conn.execute(
                "SELECT name FROM folders ORDER BY name COLLATE NOCASE, name")]

    def add_folder(self, name: str) -> None:
        with self._write() as conn:
            _ensure_folder(conn, _folder_name(name))

    def rename_folder(self, old: str, new: str) -> int:
        name = _folder_name(new)
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM folders WHERE name = ?", (old,)).fetchone() is None:
                raise NotFoundError(f"folder {old!r} not found")
            if old != name and conn.execute(
                    "SELECT 1 FROM folders WHERE name = ?", (name,)).fetchone() is not None:
                # merging into an existing folder: move the sources, drop the old name
                conn.execute("UPDATE sources SET folder = ? WHERE folder = ?", (name, old))
                conn.execute("DELETE FROM folders WHERE name = ?", (old,))
            else:
                conn.execute("UPDATE folders SET name = ? WHERE name = ?", (name, old))
            (moved,) = conn.execute("SELECT count(*) FROM sources WHERE folder = ?",
                                    (name,)).fetchone()
            return int(moved)

    def delete_folder(self, name: str) -> int:
        with self._write() as conn:
            moved = conn.execute("UPDATE sources SET folder = NULL WHERE folder = ?",
                                 (name,)).rowcount
            if conn.execute("DELETE FROM folders WHERE name = ?", (name,)).rowcount == 0:
                raise NotFoundError(f"folder {name!r} not found")
            return moved

    def claim_due_sources(
        self, now: datetime, limit: int, lease_until: datetime,
        only: Sequence[str] | None = None, holder: str = "",
    ) -> list[Source]:
        if limit <= 0:
            return []
        if only is not None:
            # named sources run due or not, but never twice at once: one with a run
            # started within the lease window and not finished is running elsewhere
            running = ("SELECT source_id FROM fetch_runs "
                       "WHERE outcome = 'running' AND started_at > ?")
            where = f"id IN ({marks(len(only))}) AND id NOT IN ({running})" if only else "0"
            params: tuple[Any, ...] = (*only, to_us(now - (lease_until - now))) if only else ()
        else:
            where = "(next_fetch_at IS NULL OR next_fetch_at <= ?)"
            params = (to_us(now),)
        where += f" AND kind != '{PUSHED_KIND}'"  # nothing to fetch
        with self._write() as conn:
            # never fetched counts as the most overdue of all
            picked = [source_from_row(r) for r in conn.execute(
                f"SELECT {_COLUMNS} FROM sources WHERE muted_reason IS NULL AND {where} "  # noqa: S608
                "ORDER BY priority DESC, coalesce(next_fetch_at, -1) ASC, id LIMIT ?",
                (*params, limit))]
            if not picked:
                return []
            ids = [src.id for src in picked]
            conn.execute(f"UPDATE sources SET next_fetch_at = ? WHERE id IN ({marks(len(ids))})",  # noqa: S608
                         (to_us(lease_until), *ids))
            if holder:
                conn.executemany(
                    "INSERT OR REPLACE INTO source_leases (source_id, holder, until) "
                    "VALUES (?, ?, ?)", [(i, holder, to_us(lease_until)) for i in ids])
        # longest overdue first among those picked (the pick itself favoured priority)
        picked.sort(key=lambda src: (src.next_fetch_at.timestamp() if src.next_fetch_at
                                     else -1.0, -src.priority, src.id))
        return [replace(src, next_fetch_at=lease_until) for src in picked]
