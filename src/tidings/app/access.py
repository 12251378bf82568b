"""Who may use the web reader: users, logged-in sessions and API tokens (R-API-6).

The web layer makes every secret and sets every policy (password hashes, cookie
values, lifetimes); this part of the facade keeps the records, in storage, so
that every process and machine on one archive sees the same logins and a logout
applies at once. Reads are plain methods; writes go through the writer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from tidings.errors import NotFoundError
from tidings.store.access import ApiToken, User, WebSession
from tidings.store.base import Reads, Unit
from tidings.store.writer import Writer

#: the one user of today's web reader
ADMIN = "admin"


class Access:
    """``Tidings.access``: see the module docstring."""

    def __init__(self, store: Reads, writer: Writer, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._writer = writer
        self.clock = clock


    def user(self, name: str = ADMIN) -> User | None:
        return self._store.find_user(name)

    def session(self, session_id: str) -> WebSession | None:
        """The logged-in session with this id, unless it expired (every request asks)."""
        return self._store.find_session(session_id, self.clock())

    def sessions(self, name: str = ADMIN) -> list[WebSession]:
        """The user's live sessions, last seen first."""
        user = self._store.find_user(name)
        return [] if user is None else self._store.list_sessions(user.id, self.clock())

    def api_token(self, digest: str) -> ApiToken | None:
        return self._store.find_api_token(digest)

    def api_tokens(self, name: str = ADMIN) -> list[ApiToken]:
        user = self._store.find_user(name)
        return [] if user is None else self._store.list_api_tokens(user.id)

    async def set_password_hash(self, password_hash: str, *, name: str = ADMIN,
                                keep_session: str | None = None) -> User:
        """Store a new password hash and end every session of the user but
        ``keep_session`` (the one that changed it), in one step."""
        user: User = await self._writer(_set_password_hash, name, password_hash,
                                        keep_session, self.clock())
        return user

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

    async def add_api_token(self, token_id: str, label: str, digest: str, *,
                            name: str = ADMIN) -> ApiToken:
        token = ApiToken(id=token_id, user_id=0, name=label, digest=digest,
                         created_at=self.clock())
        added: ApiToken = await self._writer(_add_api_token, name, token)
        return added

    async def revoke_api_token(self, token_id: str, *, name: str = ADMIN) -> bool:
        revoked: bool = await self._writer(_revoke_api_token, name, token_id)
        return revoked

    async def touch_api_token(self, token_id: str) -> bool:
        now = self.clock()
        return await self._writer(lambda unit: unit.touch_api_token(token_id, now))

    async def secret(self, name: str, candidate: str) -> str:
        """The archive's secret ``name``; ``candidate`` becomes it if there is none yet."""
        return await self._writer(lambda unit: unit.ensure_secret(name, candidate))

    async def import_access(self, password_hash: str,
                            tokens: Sequence[tuple[str, str, str, datetime]], *,
                            name: str = ADMIN) -> int:
        """Take over an older install's login state: the password hash if the user has
        none yet, and each token (id, label, digest, created) not stored yet. Running it
        twice changes nothing; returns how many tokens were added."""
        added: int = await self._writer(_import_access, name, password_hash, list(tokens),
                                        self.clock())
        return added


# Web access (R-API-6): the admin user is made by the first step that needs it.

def _user_for(unit: Unit, name: str, now: datetime) -> User:
    user = unit.find_user(name)
    if user is not None:
        return user
    if name != ADMIN:
        raise NotFoundError(f"no user {name!r}")
    return unit.add_user(name, "", True, now)


def _set_password_hash(unit: Unit, name: str, password_hash: str, keep: str | None,
                       now: datetime) -> User:
    user = unit.set_password_hash(_user_for(unit, name, now).id, password_hash, now)
    unit.delete_sessions(user.id, keep=keep)
    return user


def _start_session(unit: Unit, name: str, session: WebSession) -> WebSession:
    user = _user_for(unit, name, session.created_at)
    unit.prune_sessions(session.created_at)
    started = replace(session, user_id=user.id, admin=user.is_admin)
    unit.add_session(started)
    return started


def _end_sessions(unit: Unit, name: str, keep: str | None) -> int:
    user = unit.find_user(name)
    return 0 if user is None else unit.delete_sessions(user.id, keep=keep)


def _add_api_token(unit: Unit, name: str, token: ApiToken) -> ApiToken:
    added = replace(token, user_id=_user_for(unit, name, token.created_at).id)
    unit.add_api_token(added)
    return added


def _revoke_api_token(unit: Unit, name: str, token_id: str) -> bool:
    user = unit.find_user(name)
    return user is not None and unit.delete_api_token(user.id, token_id)


def _import_access(unit: Unit, name: str, password_hash: str,
                   tokens: list[tuple[str, str, str, datetime]], now: datetime) -> int:
    user = _user_for(unit, name, now)
    if password_hash and not user.password_hash:
        unit.set_password_hash(user.id, password_hash, now)
    added = 0
    for token_id, label, digest, created_at in tokens:
        if unit.find_api_token(digest) is None:
            unit.add_api_token(ApiToken(id=token_id, user_id=user.id, name=label,
                                        digest=digest, created_at=created_at))
            added += 1
    return added
