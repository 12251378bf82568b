"""Web access: users, logged-in sessions and API tokens (R-API-6).

Every web request looks its session up by primary key, so that read is the one
that has to stay cheap; the writes are rare (a login, a logout, a session or a
token seen again after a few minutes). Secrets live in the ``meta`` table under
the ``secret:`` prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.errors import ConfigError, NotFoundError
from tidings.store.access import ApiToken, User, WebSession
from tidings.store.sql._base import Connected, SqlConn, from_us, opt_dt, opt_us, to_us

_USER = "id, name, password_hash, is_admin, created_at, password_changed_at"
_SESSION = "id, user_id, admin, created_at, expires_at, last_seen_at, user_agent, ip"
_TOKEN = "id, user_id, name, digest, created_at, last_used_at"  # noqa: S105 - column names


def _user(row: Sequence[Any]) -> User:
    return User(id=row[0], name=row[1], password_hash=row[2], is_admin=bool(row[3]),
                created_at=from_us(row[4]), password_changed_at=opt_dt(row[5]))


def _session(row: Sequence[Any]) -> WebSession:
    return WebSession(id=row[0], user_id=row[1], admin=bool(row[2]),
                      created_at=from_us(row[3]), expires_at=from_us(row[4]),
                      last_seen_at=from_us(row[5]), user_agent=row[6], ip=row[7])


def _token(row: Sequence[Any]) -> ApiToken:
    return ApiToken(id=row[0], user_id=row[1], name=row[2], digest=row[3],
                    created_at=from_us(row[4]), last_used_at=opt_dt(row[5]))


def _check_user(conn: SqlConn, user_id: int) -> None:
    if conn.execute("SELECT 1 FROM users WHERE id = ?", (user_id,)).fetchone() is None:
        raise NotFoundError(f"user {user_id} not found")


class AccessMixin(Connected):

    # -- users
    def find_user(self, name: str) -> User | None:
        with self._read() as conn:
            row = conn.execute(f"SELECT {_USER} FROM users WHERE name = ?",  # noqa: S608
                               (name,)).fetchone()
        return None if row is None else _user(row)

    def add_user(self, name: str, password_hash: str, is_admin: bool,
                 created_at: datetime) -> User:
        with self._write() as conn:
            # fetchall: on SQLite a RETURNING statement left unfinished holds the transaction
            rows = conn.execute(
                f"INSERT INTO users (name, password_hash, is_admin, created_at) "  # noqa: S608
                f"VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING RETURNING {_USER}",
                (name, password_hash, int(is_admin), to_us(created_at))).fetchall()
        if not rows:
            raise ConfigError(f"user name {name!r} is already taken")
        return _user(rows[0])

    def set_password_hash(self, user_id: int, password_hash: str,
                          changed_at: datetime) -> User:
        with self._write() as conn:
            rows = conn.execute(
                "UPDATE users SET password_hash = ?, password_changed_at = ? WHERE id = ? "  # noqa: S608
                f"RETURNING {_USER}",
                (password_hash, to_us(changed_at), user_id)).fetchall()
        if not rows:
            raise NotFoundError(f"user {user_id} not found")
        return _user(rows[0])

    # -- sessions
    def find_session(self, session_id: str, now: datetime) -> WebSession | None:
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {_SESSION} FROM sessions WHERE id = ? AND expires_at > ?",  # noqa: S608
                (session_id, to_us(now))).fetchone()
        return None if row is None else _session(row)

    def list_sessions(self, user_id: int, now: datetime) -> list[WebSession]:
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_SESSION} FROM sessions WHERE user_id = ? AND expires_at > ? "  # noqa: S608
                "ORDER BY last_seen_at DESC, created_at DESC, id", (user_id, to_us(now)),
            ).fetchall()
        return [_session(r) for r in rows]

    def add_session(self, session: WebSession) -> None:
        s = session
        with self._write() as conn:
            _check_user(conn, s.user_id)
            conn.execute(
                f"INSERT INTO sessions ({_SESSION}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",  # noqa: S608
                (s.id, s.user_id, int(s.admin), to_us(s.created_at), to_us(s.expires_at),
                 to_us(s.last_seen_at), s.user_agent, s.ip))

    def touch_session(self, session_id: str, seen_at: datetime, expires_at: datetime) -> bool:
        with self._write() as conn:
            return conn.execute(
                "UPDATE sessions SET last_seen_at = ?, expires_at = ? WHERE id = ?",
                (to_us(seen_at), to_us(expires_at), session_id)).rowcount > 0

    def delete_session(self, session_id: str) -> bool:
        with self._write() as conn:
            return conn.execute("DELETE FROM sessions WHERE id = ?",
                                (session_id,)).rowcount > 0

    def delete_sessions(self, user_id: int, keep: str | None = None) -> int:
        with self._write() as conn:
            return int(conn.execute(
                # session ids are never empty: no ``keep`` keeps none
                "DELETE FROM sessions WHERE user_id = ? AND id != coalesce(?, '')",
                (user_id, keep)).rowcount)

    def prune_sessions(self, now: datetime) -> int:
        with self._write() as conn:
            return int(conn.execute("DELETE FROM sessions WHERE expires_at <= ?",
                                    (to_us(now),)).rowcount)

    # -- API tokens
    def find_api_token(self, digest: str) -> ApiToken | None:
        with self._read() as conn:
            row = conn.execute(f"SELECT {_TOKEN} FROM api_tokens WHERE digest = ?",  # noqa: S608
                               (digest,)).fetchone()
        return None if row is None else _token(row)

    def list_api_tokens(self, user_id: int) -> list[ApiToken]:
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_TOKEN} FROM api_tokens WHERE user_id = ? "  # noqa: S608
                "ORDER BY created_at, id", (user_id,)).fetchall()
        return [_token(r) for r in rows]

    def add_api_token(self, token: ApiToken) -> None:
        t = token
        with self._write() as conn:
            _check_user(conn, t.user_id)
            rows = conn.execute(
                f"INSERT INTO api_tokens ({_TOKEN}) VALUES (?, ?, ?, ?, ?, ?) "  # noqa: S608
                "ON CONFLICT DO NOTHING RETURNING id",
                (t.id, t.user_id, t.name, t.digest, to_us(t.created_at),
                 opt_us(t.last_used_at))).fetchall()
            if not rows:
                raise ConfigError(f"API token {t.id!r} (or its value) is already stored")

    def delete_api_token(self, user_id: int, token_id: str) -> bool:
        with self._write() as conn:
            return conn.execute("DELETE FROM api_tokens WHERE id = ? AND user_id = ?",
                                (token_id, user_id)).rowcount > 0

    def touch_api_token(self, token_id: str, used_at: datetime) -> bool:
        with self._write() as conn:
            return conn.execute("UPDATE api_tokens SET last_used_at = ? WHERE id = ?",
                                (to_us(used_at), token_id)).rowcount > 0

    # -- secrets
    def ensure_secret(self, name: str, candidate: str) -> str:
        key = f"secret:{name}"
        with self._write() as conn:
            conn.execute("INSERT INTO meta (name, value) VALUES (?, ?) "
                         "ON CONFLICT (name) DO NOTHING", (key, candidate))
            (value,) = conn.execute("SELECT value FROM meta WHERE name = ?", (key,)).fetchone()
        return str(value)
