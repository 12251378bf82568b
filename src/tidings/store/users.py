"""What the web reader's access control asks of storage (R-API-6): users, sessions, tokens.

Part of the :class:`tidings.store.base.Storage` protocol, in its own module as
``ops`` is: a domain of its own, with its own records. Semantics as in ``base``:
aware UTC datetimes in and out, every time passed in by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class User:
    """Someone who may log in to the web reader (R-API-6); for now the one admin."""

    id: int
    name: str
    password_hash: str  # the KDF's encoded hash; "" while the user has no password
    is_admin: bool
    created_at: datetime
    password_changed_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class WebSession:
    """A logged-in browser.

    ``id`` is the SHA-256 (hex) of the cookie's random value: the value itself is
    never stored, so a copy of the database logs nobody in. ``admin`` is what the
    session was granted at login.
    """

    id: str
    user_id: int
    admin: bool
    created_at: datetime
    expires_at: datetime
    last_seen_at: datetime
    user_agent: str = ""
    ip: str = ""


@dataclass(frozen=True, slots=True)
class ApiToken:
    """A bearer token of the JSON API; ``digest`` is the SHA-256 (hex) of its value."""

    id: str
    user_id: int
    name: str
    digest: str
    created_at: datetime
    last_used_at: datetime | None = None


class UserReads(Protocol):
    def find_user(self, name: str) -> User | None: ...
    def find_session(self, session_id: str, now: datetime) -> WebSession | None:
        """The session, unless it expired at or before ``now``. Every web request asks:
        one lookup by primary key."""
        ...

    def list_sessions(self, user_id: int, now: datetime) -> list[WebSession]:
        """The user's sessions that have not expired by ``now``, last seen first."""
        ...

    def find_api_token(self, digest: str) -> ApiToken | None:
        """The token whose value hashes to ``digest``. The lookup is keyed by a hash of
        what the client presented, so its timing tells nothing about a stored token."""
        ...

    def list_api_tokens(self, user_id: int) -> list[ApiToken]:
        """The user's tokens, oldest first."""
        ...


class UserWrites(Protocol):
    def add_user(self, name: str, password_hash: str, is_admin: bool,
                 created_at: datetime) -> User:
        """Insert a user; ConfigError if the name is taken."""
        ...

    def set_password_hash(self, user_id: int, password_hash: str,
                          changed_at: datetime) -> User:
        """Store a new password hash; NotFoundError for an unknown user. Sessions stay:
        which of them end is the caller's decision (``delete_sessions``)."""
        ...

    def add_session(self, session: WebSession) -> None:
        """Insert a session; NotFoundError if its user does not exist."""
        ...

    def touch_session(self, session_id: str, seen_at: datetime, expires_at: datetime) -> bool:
        """Record that the session was used and move its expiry; False if it is gone."""
        ...

    def delete_session(self, session_id: str) -> bool:
        """End one session (logout); False if there was none."""
        ...

    def delete_sessions(self, user_id: int, keep: str | None = None) -> int:
        """End every session of the user except ``keep``; returns how many ended."""
        ...

    def prune_sessions(self, now: datetime) -> int:
        """Delete the sessions that expired at or before ``now``; returns how many."""
        ...

    def add_api_token(self, token: ApiToken) -> None:
        """Insert a token; ConfigError if its id or digest is taken, NotFoundError if its
        user does not exist."""
        ...

    def delete_api_token(self, user_id: int, token_id: str) -> bool:
        """Revoke one of the user's tokens; False if the user has no such token."""
        ...

    def touch_api_token(self, token_id: str, used_at: datetime) -> bool:
        """Record that the token was used; False if it is gone."""
        ...

    def ensure_secret(self, name: str, candidate: str) -> str:
        """The secret stored under ``name``, storing ``candidate`` first if there is none.

        The first process to store one wins, so every process and machine sharing
        the archive derives the same values from it (the caller makes the candidate:
        storage neither reads the clock nor draws random numbers).
        """
        ...
