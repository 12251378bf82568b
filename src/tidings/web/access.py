"""The login state outside a request: setting the password, and older installs' file.

Until the login state moved into storage it lived in ``web-auth.json`` in the
data directory. The first time an archive is served (or its password set) after
the upgrade, that file's password hash and API tokens are taken into storage
and the file is renamed ``web-auth.json.imported``; its session-signing secret
is not, so the signed cookies of those versions stop working (their users log
in again).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tidings.app import Tidings
from tidings.errors import ConfigError
from tidings.web import auth

LEGACY_FILE = "web-auth.json"
IMPORTED_SUFFIX = ".imported"


def password_set(tidings: Tidings) -> bool:
    """Whether anyone could log in: a stored admin password or TIDINGS_ADMIN_PASSWORD."""
    if tidings.settings.admin_password:
        return True
    user = tidings.access.user()
    return user is not None and bool(user.password_hash)


async def set_password(tidings: Tidings, password: str) -> None:
    """Store a new admin password and log every session out (``tidings set-password``)."""
    password_hash = auth.hash_password(password)
    await import_legacy(tidings)  # its tokens stay valid, its old hash does not come back
    await tidings.access.set_password_hash(password_hash)


async def import_legacy(tidings: Tidings) -> bool:
    """Take an older install's ``web-auth.json`` into storage, once; True if there was one.

    Importing is idempotent (a password already stored wins, tokens already stored
    are skipped), so a crash before the rename only means it runs again.
    """
    path = tidings.settings.data_dir / LEGACY_FILE
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return False  # none, or another request of the first moment took it
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from exc
    password_hash, tokens = _read_legacy(path, text)
    await tidings.access.import_access(password_hash, tokens)
    try:
        path.replace(path.with_name(LEGACY_FILE + IMPORTED_SUFFIX))
    except FileNotFoundError:  # renamed by that other request
        pass
    except OSError as exc:  # a read-only data directory: imported, but it would come again
        raise ConfigError(f"{path}: imported, but cannot be renamed ({exc.strerror}); "
                          "check that the data directory is writable") from exc
    return True


def _read_legacy(path: Path, text: str) -> tuple[str, list[tuple[str, str, str, datetime]]]:
    try:
        data: dict[str, Any] = json.loads(text)
        tokens = [(str(t["id"]), str(t["name"]), str(t["digest"]), _created(t))
                  for t in data.get("tokens", ())]
        return str(data.get("password_hash", "")), tokens
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{path}: unreadable auth file of an older version ({exc}); "
                          "move it away and set the password again") from exc


def _created(token: dict[str, Any]) -> datetime:
    created = datetime.fromisoformat(str(token["created_at"]))
    return created.astimezone(UTC) if created.tzinfo else created.replace(tzinfo=UTC)
