"""One archive is one archive: who has it open, so that restore and migrate can refuse.

``tidings restore`` renamed the SQLite file under a running ``tidings serve``,
which then went on serving and writing the renamed old file while the CLI saw
the restored one. So every process that opens an SQLite archive holds a shared
lock on a file beside it (``tidings.sqlite3.lock``, a POSIX record lock: the
kernel drops it with the process, however it ends, so no stale lock is ever
left), and ``restore`` / ``migrate`` into it take the lock exclusively for their
whole length or refuse, naming a holder: "stop tidings serve (pid N) first".
An opener that finds the lock taken exclusively waits for the restore to end.

POSIX locks belong to the process, not to the file descriptor: two storages of
one process share one lock here (counted), and a process that holds the archive
exclusively opens it freely (``migrate`` writing the SQLite file it copies into).
PostgreSQL archives do the same with session advisory locks
(``store.postgres._inuse``); this module names the processes for both.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil

from tidings.errors import ConfigError, StorageError

#: how long an opener waits for a restore or migrate into the archive to end
WAIT_S = 30.0
#: options of the ``tidings`` group that take a value (skipped to find the command)
_VALUED = frozenset({"--data", "--config"})
#: struct flock of Linux (l_type, l_whence, l_start, l_len, l_pid), native alignment
_FLOCK = "hhqqi"


def process_name(pid: int) -> str:
    """``tidings serve (pid N)``: the command a tidings process runs, read from its
    command line; any other program by its name."""
    try:
        words = psutil.Process(pid).cmdline()
    except (psutil.Error, OSError):
        return f"another process (pid {pid})"
    start = next((i for i, w in enumerate(words)
                  if Path(w).name in ("tidings", "__main__.py") or w == "tidings"), None)
    if start is None:
        return f"{Path(words[0]).name if words else 'another process'} (pid {pid})"
    rest, skip = words[start + 1:], False
    for word in rest:
        if skip or word.startswith("-"):
            skip = word in _VALUED
            continue
        return f"tidings {word} (pid {pid})"
    return f"tidings (pid {pid})"


@dataclass(slots=True)
class _Held:
    fd: int
    exclusive: bool
    count: int = 1


_HELD: dict[Path, _Held] = {}
_GUARD = threading.Lock()


def lock_path(database: Path) -> Path:
    """The lock file of ``database`` (kept: deleting it would race with an opener)."""
    return database.with_name(database.name + ".lock")


def _open(path: Path) -> int | None:
    """The lock file, made if missing; None where it can be neither made nor read
    (a read-only directory: nothing can be restored into it either)."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        try:
            return os.open(path, os.O_RDONLY)
        except OSError:
            return None


def _holder(fd: int) -> int | None:
    """The pid of a process holding a lock that a write lock would conflict with."""
    query = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
    try:
        kind, _, _, _, pid = struct.unpack(_FLOCK, fcntl.fcntl(fd, fcntl.F_GETLK, query))
    except OSError:
        return None
    return None if kind == fcntl.F_UNLCK or pid <= 0 else int(pid)


def _busy(exc: OSError) -> bool:
    return exc.errno in (errno.EACCES, errno.EAGAIN)


def hold_shared(database: Path) -> None:
    """This process has the archive open (until :func:`release`); waits while a restore
    or migrate holds it, then a StorageError naming that process."""
    key = database.resolve()
    with _GUARD:
        held = _HELD.get(key)
        if held is not None:
            held.count += 1
            return
        fd = _open(lock_path(key))
        if fd is None:
            return
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if not _busy(exc) or time.monotonic() > deadline:
                    pid = _holder(fd)
                    os.close(fd)
                    who = process_name(pid) if pid else "another process"
                    raise StorageError(f"the archive {database} is being restored or "
                                       f"migrated into by {who}; open it when that is done"
                                       ) from None
                time.sleep(0.1)
        _HELD[key] = _Held(fd, exclusive=False)


def release(database: Path) -> None:
    """The end of :func:`hold_shared` (the lock goes with the last storage of the file)."""
    key = database.resolve()
    with _GUARD:
        held = _HELD.get(key)
        if held is None:
            return
        held.count -= 1
        if held.count <= 0:
            del _HELD[key]
            os.close(held.fd)  # closing the file drops the process's lock on it


@contextlib.contextmanager
def exclusive(database: Path, doing: str) -> Iterator[None]:
    """Hold the archive alone while ``doing`` (restore, migrate) runs; a ConfigError
    naming the process that has it open otherwise."""
    key = database.resolve()
    with _GUARD:
        if key in _HELD:
            raise ConfigError(f"{doing}: this process has the archive {database} open")
        key.parent.mkdir(parents=True, exist_ok=True)
        fd = _open(lock_path(key))
        if fd is None:
            raise ConfigError(f"{doing}: cannot write beside {database} (read-only?)")
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            pid = _holder(fd) if _busy(exc) else None
            os.close(fd)
            if not _busy(exc):
                raise ConfigError(f"{doing}: cannot lock {database}: {exc.strerror}") from None
            who = process_name(pid) if pid else "another process"
            raise ConfigError(f"{doing}: the archive {database} is open in {who}; "
                              f"stop {who} first") from None
        _HELD[key] = _Held(fd, exclusive=True)
    try:
        yield
    finally:
        with _GUARD:
            _HELD.pop(key, None)
            os.close(fd)
