"""Sources: the columns, row converter and parameters both backends share, and the
methods on sources and folders, written once (the scheduler's claim is each backend's)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, ClassVar

from tidings.errors import ConfigError, NotFoundError
from tidings.model import CostClass, Health, IdentityMode, Source, SourceKind, Visibility
from tidings.store.base import PUSHED_KIND, SourceUpdate
from tidings.store.sql._base import Connected, SqlConn, marks, opt_dt, opt_us, to_us
from tidings.textutil import collapse_ws

_COLUMNS = (
    "id, kind, url, title, config, visibility, interval_min, next_fetch_at, fail_count, "
    "health, cursor, cost_class, identity_mode, priority, muted_reason, created_at, "
    "last_success_at, last_error, site_url, folder"
)


_NAMES = tuple(name.strip() for name in _COLUMNS.split(","))  # the fields of Source, in order


_FOLDER = _NAMES.index("folder")


def source_from_row(row: Sequence[Any]) -> Source:
    return Source(
        id=row[0], kind=SourceKind(row[1]), url=row[2], title=row[3],
        config=json.loads(row[4]), visibility=Visibility(row[5]), interval_min=row[6],
        next_fetch_at=opt_dt(row[7]), fail_count=row[8], health=Health(row[9]),
        cursor=json.loads(row[10]), cost_class=CostClass(row[11]),
        identity_mode=IdentityMode(row[12]), priority=row[13], muted_reason=row[14],
        created_at=opt_dt(row[15]), last_success_at=opt_dt(row[16]), last_error=row[17],
        site_url=row[18], folder=row[19],
    )


#: a stand-in whose fields are replaced by a change, to convert just those columns
_PROBE = Source(id="-", kind=SourceKind("-"), url="-", created_at=datetime(2000, 1, 1, tzinfo=UTC))


def _changed_params(changes: Mapping[str, Any]) -> dict[str, Any]:
    """Column values for ``changes`` alone, converted (and checked) as a whole row is."""
    row = dict(zip(_NAMES, _source_params(replace(_PROBE, **changes)), strict=True))
    return {name: row[name] for name in _NAMES if name in changes}


def _folder(name: str | None) -> str | None:
    """A folder name as stored, whichever call names it: "News " and "News" are one
    folder, and a blank name is no folder."""
    return (collapse_ws(name) or None) if name else None


def _folder_name(name: str) -> str:
    """A folder name that must not be blank (creating or renaming a folder)."""
    clean = _folder(name)
    if clean is None:
        raise ConfigError("a folder needs a name")
    return clean


def _source_params(s: Source) -> tuple[Any, ...]:
    if s.created_at is None:
        raise ConfigError(f"source {s.id!r}: a new source needs its created_at")
    created = s.created_at
    return (
        s.id, str(SourceKind(s.kind)), s.url, s.title, json.dumps(dict(s.config)),
        str(Visibility(s.visibility)), s.interval_min, opt_us(s.next_fetch_at), s.fail_count,
        str(Health(s.health)), json.dumps(dict(s.cursor)), str(CostClass(s.cost_class)),
        str(IdentityMode(s.identity_mode)), s.priority, s.muted_reason, to_us(created),
        opt_us(s.last_success_at), s.last_error, s.site_url, _folder(s.folder),
    )


def _ensure_folder(conn: SqlConn, name: str | None) -> None:
    if name:
        conn.execute("INSERT INTO folders (name) VALUES (?) ON CONFLICT DO NOTHING", (name,))


def _check_free(conn: SqlConn, source: Source, own_id: str | None) -> None:
    if own_id is None and conn.execute(
            "SELECT 1 FROM sources WHERE id = ?", (source.id,)).fetchone():
        raise ConfigError(f"source id {source.id!r} is already taken")
    row = conn.execute("SELECT id FROM sources WHERE url = ?", (source.url,)).fetchone()
    if row and row[0] != own_id:
        raise ConfigError(f"source URL {source.url} is already used by source {row[0]!r}")


def get_source(conn: SqlConn, source_id: str) -> Source:
    row = conn.execute(f"SELECT {_COLUMNS} FROM sources WHERE id = ?",  # noqa: S608
                       (source_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"source {source_id!r} not found")
    return source_from_row(row)


def _change(conn: SqlConn, source_id: str, update: SourceUpdate) -> None:
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


def _claim_filter(now: datetime, lease_until: datetime,
                 only: Sequence[str] | None) -> tuple[str, tuple[Any, ...]]:
    """The condition on ``sources`` (and its values) of the sources a claim may pick:
    the due ones, or the named ones, due or not, that are not running elsewhere."""
    if only is not None:
        # named sources run due or not, but never twice at once: one with a run
        # started within the lease window and not finished is running elsewhere
        running = ("SELECT source_id FROM fetch_runs "
                   "WHERE outcome = 'running' AND started_at > ?")
        where = f"id IN ({marks(len(only))}) AND id NOT IN ({running})" if only else "false"
        params: tuple[Any, ...] = (*only, to_us(now - (lease_until - now))) if only else ()
    else:
        where = "(next_fetch_at IS NULL OR next_fetch_at <= ?)"
        params = (to_us(now),)
    return f"{where} AND kind != '{PUSHED_KIND}'", params  # pushed: nothing to fetch


def _claimed(picked: list[Source], lease_until: datetime) -> list[Source]:
    """The sources a claim picked, leased until ``lease_until``: longest overdue first
    among those picked (the pick itself favoured priority; never fetched counts as
    the most overdue of all)."""
    picked.sort(key=lambda src: (src.next_fetch_at.timestamp() if src.next_fetch_at
                                 else -1.0, -src.priority, src.id))
    return [replace(src, next_fetch_at=lease_until) for src in picked]


class SourcesCore(Connected):
    """Sources and folders, and the scheduler's claim on them; each backend says in
    what order its pick walks the ``sources_claim`` index and how it records leases."""

    #: the pick's order after priority: longest overdue first, never fetched first of all
    _CLAIM_ORDER: ClassVar[str]

    def _lease(self, conn: SqlConn, ids: list[str], holder: str, until: int) -> None:
        """Record ``holder`` as the holder of the sources ``ids`` until ``until``."""
        raise NotImplementedError

    def claim_due_sources(
        self, now: datetime, limit: int, lease_until: datetime,
        only: Sequence[str] | None = None, holder: str = "",
    ) -> list[Source]:
        """The pick locks its rows and skips rows another claim holds
        (``dialect.skip_locked``; SQLite's one writer already excludes): concurrent
        runners take disjoint sources without waiting for each other, and each lease
        record is written by the one claim that holds its source's row."""
        if limit <= 0:
            return []
        where, params = _claim_filter(now, lease_until, only)
        with self._write() as conn:
            picked = [source_from_row(r) for r in conn.execute(
                f"SELECT {_COLUMNS} FROM sources WHERE muted_reason IS NULL AND {where} "  # noqa: S608
                f"ORDER BY priority DESC, {self._CLAIM_ORDER}, id LIMIT ?"
                f"{self.dialect.skip_locked}", (*params, limit)).fetchall()]
            if not picked:
                return []
            ids = [src.id for src in picked]
            claim, ids_params = self.dialect.any_of("id", ids)
            conn.execute(f"UPDATE sources SET next_fetch_at = ? WHERE {claim}",  # noqa: S608
                         (to_us(lease_until), *ids_params))
            if holder:
                self._lease(conn, ids, holder, to_us(lease_until))
        return _claimed(picked, lease_until)

    def add_source(self, source: Source) -> Source:
        if not source.id:
            raise ConfigError("a source needs a non-empty id")
        with self._write() as conn:
            _check_free(conn, source, None)
            params = _source_params(source)
            _ensure_folder(conn, params[_FOLDER])
            conn.execute(f"INSERT INTO sources ({_COLUMNS}) VALUES ({marks(len(params))})",  # noqa: S608
                         params)
            return get_source(conn, source.id)

    def get_source(self, source_id: str) -> Source:
        with self._read() as conn:
            return get_source(conn, source_id)

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
            return get_source(conn, source_id)

    def change_source(self, source_id: str, update: SourceUpdate) -> None:
        with self._write() as conn:
            _change(conn, source_id, update)

    def delete_source(self, source_id: str) -> None:
        with self._write() as conn:
            if conn.execute("DELETE FROM sources WHERE id = ?", (source_id,)).rowcount == 0:
                raise NotFoundError(f"source {source_id!r} not found")

    def list_folders(self) -> list[str]:
        """By name ignoring case (``lower``: ASCII letters on SQLite, as its ``NOCASE``)."""
        with self._read() as conn:
            return [r[0] for r in conn.execute(
                "SELECT name FROM folders ORDER BY lower(name), name").fetchall()]

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
            return int(moved)
