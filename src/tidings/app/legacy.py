"""An older install's login file, ``web-auth.json``, taken into storage once.

Until the login state moved into storage it lived in this file in the data
directory. The first time an archive is served (or its password set) after the
upgrade, the file's password hash and API tokens are taken into storage and the
file is renamed ``web-auth.json.imported``; its session-signing secret is not,
so the signed cookies of those versions stop working (their users log in again).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tidings.errors import ConfigError

LEGACY_FILE = "web-auth.json"
IMPORTED_SUFFIX = ".imported"

#: (id, label, digest, created) of each API token of the file
LegacyTokens = list[tuple[str, str, str, datetime]]


def read_legacy(path: Path) -> tuple[str, LegacyTokens] | None:
    """The file's password hash and tokens; None when there is no file."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from exc
    try:
        data: dict[str, Any] = json.loads(text)
        tokens = [(str(t["id"]), str(t["name"]), str(t["digest"]), _created(t))
                  for t in data.get("tokens", ())]
        return str(data.get("password_hash", "")), tokens
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{path}: unreadable auth file of an older version ({exc}); "
                          "move it away and set the password again") from exc


def rename_legacy(path: Path) -> None:
    """Mark the file imported (a concurrent importer may have renamed it already)."""
    try:
        path.replace(path.with_name(LEGACY_FILE + IMPORTED_SUFFIX))
    except FileNotFoundError:  # renamed by that other request
        pass
    except OSError as exc:  # a read-only data directory: imported, but it would come again
        raise ConfigError(f"{path}: imported, but cannot be renamed ({exc.strerror}); "
                          "check that the data directory is writable") from exc


def _created(token: dict[str, Any]) -> datetime:
    created = datetime.fromisoformat(str(token["created_at"]))
    return created.astimezone(UTC) if created.tzinfo else created.replace(tzinfo=UTC)
