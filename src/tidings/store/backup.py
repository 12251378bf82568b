"""Backups (R-STORE-5): consistent copies named by time, rotated to the newest 14 days
(every copy of those days is kept) + the newest copy of each of 12 months."""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import Path

from tidings.errors import StorageError
from tidings.store.base import Storage


def backup_stem(now: datetime) -> str:
    """A backup's name without the backend's extension: by the second (UTC), so a
    second backup on the same day keeps the first."""
    return f"tidings-{now:%Y-%m-%d-%H%M%S}"


def make_backup(storage: Storage, backup_dir: Path, now: datetime, *, keep_daily: int = 14,
                keep_monthly: int = 12) -> Path:
    """Write a backup (never over an earlier one) and rotate the rest.

    A directory we may not write (read-only data directory, a file in the way) is a
    StorageError saying which, not a PermissionError."""
    try:
        stem, n = backup_stem(now), 2
        while (backup_dir / f"{stem}{storage.backup_suffix}").exists():
            stem = f"{backup_stem(now)}-{n}"
            n += 1
        dest = storage.backup(backup_dir, stem)
        rotate_backups(backup_dir, now, suffix=storage.backup_suffix, keep_daily=keep_daily,
                       keep_monthly=keep_monthly)
    except OSError as exc:
        raise StorageError(f"cannot write the backup in {backup_dir}: "
                           f"{exc.strerror or exc}") from exc
    return dest


def rotate_backups(backup_dir: Path, now: datetime, *, suffix: str, keep_daily: int = 14,
                   keep_monthly: int = 12) -> list[Path]:
    """Delete backups beyond those of the newest ``keep_daily`` days and the newest
    backup of each of the latest ``keep_monthly`` months; returns what was deleted.
    Names from before backups were named by time (``tidings-DAY``) count as that day's.

    Counting files rather than days since ``now`` means a machine that was off for a
    month still keeps its last backups. Files dated after ``now`` (a clock that went
    back) are kept and not counted; files with other names are never touched.
    """
    dated: list[tuple[date, str, Path]] = []
    name = re.compile(r"^tidings-(\d{4}-\d{2}-\d{2})((?:-\d{6})?(?:-\d+)?)"
                      + re.escape(suffix) + "$")
    for path in backup_dir.glob(f"tidings-*{suffix}"):
        m = name.match(path.name)
        if m is None:
            continue
        try:
            day = date.fromisoformat(m.group(1))
        except ValueError:
            continue
        if day <= now.date():
            dated.append((day, m.group(2), path))
    dated.sort(reverse=True)
    days = sorted({day for day, _, _ in dated}, reverse=True)[:max(keep_daily, 0)]
    keep = {path for day, _, path in dated if day in days}
    months: dict[tuple[int, int], Path] = {}
    for day, _, path in dated:
        months.setdefault((day.year, day.month), path)
    for month in sorted(months, reverse=True)[:max(keep_monthly, 0)]:
        keep.add(months[month])
    deleted = [path for _, _, path in dated if path not in keep]
    for path in deleted:
        path.unlink(missing_ok=True)
    return deleted
