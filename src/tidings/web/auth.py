"""Who may do what in the web reader (R-API-6), and the state that decides it.

The state (admin password hash, session-signing secret, API token hashes) lives
in one JSON file under the data directory, written atomically with mode 0600:
it is not archive data, so it stays out of the database and out of backups of
it. Sessions are stateless signed cookies; changing the password rotates the
``epoch`` they carry, which logs every existing session out.

Three access modes follow from the settings:

* **open** - no password at all: only loopback clients are served, each as admin
  (first run just works on the machine that runs it);
* **private** - a password is set, reading needs a session or a token (default);
* **public** - a password is set and ``public_reading``: anyone may read, only
  the admin may change anything.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import os
import secrets
import time
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from tidings.errors import ConfigError
from tidings.settings import Settings

AUTH_FILE = "web-auth.json"
SESSION_COOKIE = "tidings_session"
SESSION_DAYS = 30
TOKEN_PREFIX = "tdg_"  # noqa: S105 - a prefix, not a secret
MIN_PASSWORD = 8

_hasher = PasswordHasher()


@dataclass(frozen=True, slots=True)
class ApiToken:
    id: str
    name: str
    digest: str  # sha256 of the token: tokens are random, a slow KDF adds nothing
    created_at: str


@dataclass(frozen=True, slots=True)
class AuthState:
    secret: str
    epoch: int = 0
    password_hash: str = ""
    tokens: tuple[ApiToken, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class Session:
    nonce: str
    admin: bool
    expires: int


def auth_path(settings: Settings) -> Path:
    return settings.data_dir / AUTH_FILE


def load_state(settings: Settings) -> AuthState:
    """Read the auth file, creating it (with a fresh secret) on first use."""
    path = auth_path(settings)
    if not path.exists():
        state = AuthState(secret=secrets.token_urlsafe(32))
        save_state(settings, state)
        return state
    try:
        data = json.loads(path.read_text("utf-8"))
        tokens = tuple(ApiToken(**t) for t in data.get("tokens", ()))
        return AuthState(secret=str(data["secret"]), epoch=int(data.get("epoch", 0)),
                         password_hash=str(data.get("password_hash", "")), tokens=tokens)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: unreadable auth file ({exc}); delete it to reset") from exc


def save_state(settings: Settings, state: AuthState) -> None:
    """Write atomically: a crash leaves the old file or the new one, never half."""
    path = auth_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    data = asdict(state)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
    tmp.replace(path)


def hash_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise ConfigError(f"the password needs at least {MIN_PASSWORD} characters")
    return _hasher.hash(password)


def set_password(settings: Settings, password: str) -> None:
    """Store a new admin password hash and log out every session."""
    state = load_state(settings)
    save_state(settings, replace(state, password_hash=hash_password(password),
                                 epoch=state.epoch + 1))


def check_password(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def new_token(settings: Settings, name: str) -> str:
    """Create an API token; the clear value is returned once and never stored."""
    name = name.strip()[:80] or "token"
    value = TOKEN_PREFIX + secrets.token_urlsafe(30)
    token = ApiToken(id=secrets.token_hex(6), name=name, digest=_digest(value),
                     created_at=datetime.now(UTC).isoformat(timespec="seconds"))
    state = load_state(settings)
    save_state(settings, replace(state, tokens=(*state.tokens, token)))
    return value


def revoke_token(settings: Settings, token_id: str) -> bool:
    state = load_state(settings)
    kept = tuple(t for t in state.tokens if t.id != token_id)
    save_state(settings, replace(state, tokens=kept))
    return len(kept) != len(state.tokens)


def token_valid(state: AuthState, value: str) -> bool:
    digest = _digest(value)
    return any(hmac.compare_digest(t.digest, digest) for t in state.tokens)


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


# ------------------------------------------------------------------ sessions


def _sign(secret: str, payload: bytes) -> str:
    return hmac.new(secret.encode(), payload, hashlib.sha256).hexdigest()


def encode_session(state: AuthState, session: Session) -> str:
    body = {"n": session.nonce, "a": session.admin, "x": session.expires, "e": state.epoch}
    payload = base64.urlsafe_b64encode(json.dumps(body, separators=(",", ":")).encode())
    return f"{payload.decode()}.{_sign(state.secret, payload)}"


def decode_session(state: AuthState, cookie: str | None) -> Session | None:
    """A valid, unexpired session of the current epoch, or None."""
    if not cookie or "." not in cookie:
        return None
    payload, _, mac = cookie.rpartition(".")
    if not hmac.compare_digest(mac, _sign(state.secret, payload.encode())):
        return None
    try:
        body: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload))
        session = Session(nonce=str(body["n"]), admin=bool(body["a"]), expires=int(body["x"]))
        epoch = int(body["e"])
    except (ValueError, KeyError, TypeError):
        return None
    if epoch != state.epoch or session.expires < time.time():
        return None
    return session


def new_session(admin: bool) -> Session:
    return Session(nonce=secrets.token_urlsafe(16), admin=admin,
                   expires=int(time.time()) + SESSION_DAYS * 86400)


def csrf_token(state: AuthState, session: Session) -> str:
    """Bound to the session: a token from another browser is worthless here."""
    return _sign(state.secret, f"csrf:{session.nonce}".encode())[:32]


def csrf_ok(state: AuthState, session: Session | None, token: str | None) -> bool:
    if session is None or not token:
        return False
    return hmac.compare_digest(csrf_token(state, session), token)


# ------------------------------------------------------------------ addresses

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_loopback(host: str | None) -> bool:
    """True for a loopback address or name (``127.0.0.0/8``, ``::1``, localhost)."""
    if not host:
        return False
    host = host.strip().strip("[]").lower()
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_header_name(value: str) -> str:
    """The host part of a Host header (``[::1]:8080`` -> ``::1``)."""
    value = value.strip()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    return value.rpartition(":")[0] if value.count(":") == 1 else value
