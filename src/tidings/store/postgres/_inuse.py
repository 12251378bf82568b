"""Who has a PostgreSQL archive open: a session advisory lock per process (see
``tidings.store.inuse`` for why and for the SQLite side).

Every storage holds a shared advisory lock on one session of its own for as long
as it is open (PostgreSQL drops it with the session, however the process ends),
named by ``application_name`` (``tidings serve (pid N)``, the client's pid: the
server's backend pid would mean nothing to the person reading the message).
``migrate`` into the archive takes the lock exclusively or refuses, naming a
holder. The lock is keyed by the schema too, so archives in other schemas of the
same database are never in each other's way.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg

from tidings.errors import ConfigError, StorageError
from tidings.store.inuse import WAIT_S, process_name
from tidings.store.postgres._db import connect, one_line

#: the first advisory lock key ("tdgs"); the second is the schema's hash
KEY = 0x7464_6773
_SHARED = "SELECT pg_try_advisory_lock_shared(%s, hashtext(current_schema()) & 2147483647)"
_ALONE = "SELECT pg_try_advisory_lock(%s, hashtext(current_schema()) & 2147483647)"
_HOLDERS = (
    "SELECT a.application_name, a.pid FROM pg_locks l JOIN pg_stat_activity a "
    "ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND l.classid::bigint = %s "
    "AND l.objid::bigint = (hashtext(current_schema()) & 2147483647) AND l.objsubid = 2 "
    "AND l.pid != pg_backend_pid() ORDER BY a.backend_start LIMIT 1")

_EXCLUSIVE: set[str] = set()  # URLs this process holds alone (migrate opens them too)
_GUARD = threading.Lock()


def _session(url: str) -> psycopg.Connection[Any]:
    conn = connect(url)
    conn.execute("SELECT set_config('application_name', %s, false)",
                 (process_name(os.getpid())[:63],))
    return conn


def _holder(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute(_HOLDERS, (KEY,)).fetchone()
    if row is None:
        return "another process"
    name = str(row[0] or "")
    return name if name.startswith("tidings") else f"a session of {name or 'PostgreSQL'}"


def hold_shared(url: str) -> psycopg.Connection[Any] | None:
    """The session holding this process's shared lock (close it to let go); waits while
    a migrate holds the archive, then a StorageError naming it."""
    with _GUARD:
        if url in _EXCLUSIVE:
            return None
    conn = _session(url)
    deadline = time.monotonic() + WAIT_S
    try:
        while not conn.execute(_SHARED, (KEY,)).fetchone()[0]:  # type: ignore[index]
            if time.monotonic() > deadline:
                raise StorageError(f"the archive is being migrated into by {_holder(conn)}; "
                                   "open it when that is done")
            time.sleep(0.2)
    except BaseException:
        conn.close()
        raise
    return conn


@contextlib.contextmanager
def exclusive(url: str, doing: str) -> Iterator[None]:
    """Hold the archive at ``url`` alone while ``doing`` runs; a ConfigError naming a
    process that has it open otherwise."""
    conn = _session(url)
    try:
        try:
            got = conn.execute(_ALONE, (KEY,)).fetchone()
            who = "" if got and got[0] else _holder(conn)
        except psycopg.Error as exc:
            raise StorageError(f"{doing}: cannot lock the archive: {one_line(exc)}") from exc
        if who:
            raise ConfigError(f"{doing}: the archive is open in {who}; stop {who} first")
        with _GUARD:
            _EXCLUSIVE.add(url)
        try:
            yield
        finally:
            with _GUARD:
                _EXCLUSIVE.discard(url)
    finally:
        conn.close()
