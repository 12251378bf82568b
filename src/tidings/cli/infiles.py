"""Reading a file the user names on the command line safely, and saying why one
could not be written.

``import-opml /dev/zero`` read without end and a FIFO with no writer hung the
command (issue 16): a path is opened without blocking, must be a regular file,
and is read up to a limit.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tidings.errors import BadValueError, ConfigError

#: the largest OPML file imported (a list of 10,000 feeds is about 2 MB)
OPML_MAX_BYTES = 20 * 1024 * 1024


def read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of ``path``; ConfigError unless it is a regular file of at most ``limit``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens at once, never waits
    except FileNotFoundError:
        raise BadValueError(f"{path}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot open ({exc.strerror})") from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path}: not a regular file")
        if info.st_size > limit:
            raise ConfigError(f"{path}: {info.st_size:,} bytes is more than the "
                              f"{limit:,} allowed")
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew while we read
        raise ConfigError(f"{path}: more than the {limit:,} bytes allowed")
    return data


def cannot_write(path: Path, exc: OSError) -> ConfigError:
    """The one line for an output file that could not be written, naming the fix when
    the folder is missing (``export --out nodir/x.jsonl``)."""
    folder = path.parent
    if isinstance(exc, FileNotFoundError) and not folder.exists():
        return ConfigError(f"{path}: the folder {folder} does not exist (create it first)")
    return ConfigError(f"{path}: cannot write ({exc.strerror or exc})")
