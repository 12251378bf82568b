"""Who may use the web reader: users, logged-in sessions, passwords (R-API-6).

The web layer makes the cookies and sets the policies (lifetimes, modes); this
use case keeps the records, in storage, so that every process and machine on
one archive sees the same logins and a logout applies at once. It also owns the
password itself (``tidings set-password`` and the settings page both come here)
and takes over an older install's login file (``legacy.py``). API tokens are
``tokens.py``. Reads are plain methods; writes go through the writer.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Protocol

from tidings.app.core import Core
from tidings.app.legacy import LEGACY_FILE, LegacyTokens, read_legacy, rename_legacy
from tidings.app.passwords import hash_password
from tidings.errors import NotFoundError
from tidings.store.users import ApiToken, User, UserReads, UserWrites, WebSession

#: the one user of today's web reader
ADMIN = "admin"


class UserUnit(UserReads, UserWrites, Protocol):
    """A step on users: the user looked up (or the admin made) in the unit that writes."""


class Users:
    """``Tidings.users``: see the module docstring."""

    def __init__(self, core: Core) -> None:
        self._core = core
        self._store: UserReads = core.store
        self._writer = core.writer
        self.clock = core.clock

    def user(self, name: str = ADMIN) -> User | None:
        return self._store.find_user(name)

    def password_set(self) -> bool:
        """Whether anyone could log in: a stored admin password or TIDINGS_ADMIN_PASSWORD."""
        if self._core.settings.admin_password:
            return True
        user = self.user()
        return user is not None and bool(user.password_hash)

    async def set_password(self, password: str, *, name: str = ADMIN,
                           keep_session: str | None = None) -> User:
        """Store a new password (ConfigError when too short) and end every session of
        the user but ``keep_session`` (the one that changed it), in one step."""
        password_hash = await asyncio.to_thread(hash_password, password)  # a slow KDF
        await self.import_legacy()  # its tokens stay valid, its old hash does not come back
        user: User = await self._writer(_set_password_hash, name, password_hash,
                                        keep_session, self.clock())
        return user

    def session(self, session_id: str) -> WebSession | None:
        """The logged-in session with this id, unless it expired (every request asks)."""
        return self._store.find_session(session_id, self.clock())

    def sessions(self, name: str = ADMIN) -> list[WebSession]:
        """The user's live sessions, last seen first."""
        user = self._store.find_user(name)
        return [] if user is None else self._store.list_sessions(user.id, self.clock())

    async def start_session(self, session_id: str, lifetime: timedelta, *, name: str = ADMIN,
                            user_agent: str = "", ip: str = "") -> WebSession:
        """Record a login; sessions that expired meanwhile are swept in the same step."""
        now = self.clock()
        session = WebSession(id=session_id, user_id=0, admin=False, created_at=now,
                             expires_at=now + lifetime, last_seen_at=now,
                             user_agent=user_agent, ip=ip)
        started: WebSession = await self._writer(_start_session, name, session)
        return started

    async def touch_session(self, session_id: str, lifetime: timedelta) -> bool:
        """The session was used now: it lives ``lifetime`` from now on."""
        now = self.clock()
        return await self._writer(
            lambda unit: unit.touch_session(session_id, now, now + lifetime))

    async def end_session(self, session_id: str) -> bool:
        return await self._writer(lambda unit: unit.delete_session(session_id))

    async def end_sessions(self, name: str = ADMIN, *, keep: str | None = None) -> int:
        """Log the user out everywhere (but in ``keep``); returns how many sessions ended."""
        ended: int = await self._writer(_end_sessions, name, keep)
        return ended

    async def secret(self, name: str, candidate: str) -> str:
        """The archive's secret ``name``; ``candidate`` becomes it if there is none yet."""
        return await self._writer(lambda unit: unit.ensure_secret(name, candidate))

    async def import_legacy(self, name: str = ADMIN) -> bool:
        """Take an older install's login file into storage, once; True if there was one.

        Importing is idempotent (a password already stored wins, tokens already
        stored are skipped), so a crash before the file is renamed only means it
        runs again.
        """
        found = read_legacy(self._core.settings.data_dir / LEGACY_FILE)
        if found is None:
            return False  # none, or another request of the first moment took it
        password_hash, tokens = found
        await self._writer(_import_legacy, name, password_hash, tokens, self.clock())
        rename_legacy(self._core.settings.data_dir / LEGACY_FILE)
        return True


# The admin user is made by the first step that needs it.

def user_for(unit: UserUnit, name: str, now: datetime) -> User:
    """The user ``name``; the admin is added when missing, anyone else NotFoundError."""
    user = unit.find_user(name)
    if user is not None:
        return user
    if name != ADMIN:
        raise NotFoundError(f"no user {name!r}")
    return unit.add_user(name, "", True, now)


def _set_password_hash(unit: UserUnit, name: str, password_hash: str, keep: str | None,
                       now: datetime) -> User:
    user = unit.set_password_hash(user_for(unit, name, now).id, password_hash, now)
    unit.delete_sessions(user.id, keep=keep)
    return user


def _start_session(unit: UserUnit, name: str, session: WebSession) -> WebSession:
    user = user_for(unit, name, session.created_at)
    unit.prune_sessions(session.created_at)
    started = replace(session, user_id=user.id, admin=user.is_admin)
    unit.add_session(started)
    return started


def _end_sessions(unit: UserUnit, name: str, keep: str | None) -> int:
    user = unit.find_user(name)
    return 0 if user is None else unit.delete_sessions(user.id, keep=keep)


def _import_legacy(unit: UserUnit, name: str, password_hash: str, tokens: LegacyTokens,
                   now: datetime) -> int:
    user = user_for(unit, name, now)
    if password_hash and not user.password_hash:
        unit.set_password_hash(user.id, password_hash, now)
    added = 0
    for token_id, label, digest, created_at in tokens:
        if unit.find_api_token(digest) is None:
            unit.add_api_token(ApiToken(id=token_id, user_id=user.id, name=label,
                                        digest=digest, created_at=created_at))
            added += 1
    return added
