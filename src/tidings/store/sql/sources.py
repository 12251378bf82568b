"""Sources: the columns, row converter and parameters both backends share."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from tidings.errors import ConfigError
from tidings.model import CostClass, Health, IdentityMode, Source, SourceKind, Visibility
from tidings.store.sql._base import opt_dt, opt_us, to_us
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
_PROBE = Source(id="-", kind=SourceKind.RSS, url="-", created_at=datetime(2000, 1, 1, tzinfo=UTC))


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
