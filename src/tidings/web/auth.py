"""Who may do what in the web reader (R-API-6): the secrets and the checks.

The records (the admin user, logged-in sessions, API tokens) live in storage,
reached through the users and tokens use cases, so that a logout or a new
password applies at once in every process sharing the archive. This module
makes and checks what they are built on, and stores nothing itself:

* a session cookie is a random value; storage keeps only its SHA-256 (the
  session's id), so a copy of the database logs nobody in. A visitor who is not
  logged in gets a cookie too, but no row: it only binds the CSRF tokens of the
  visitor's forms (a login form needs one before there is any session);
* an API token is a random value; storage keeps its SHA-256;
* a CSRF token is an HMAC of the session's id under a secret kept in storage.

Three access modes follow from the settings:

* **open** - no password at all: only loopback clients are served, each as admin
  (first run just works on the machine that runs it);
* **private** - a password is set, reading needs a session or a token (default);
* **public** - a password is set and ``public_reading``: anyone may read, only
  the admin may change anything.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets
from datetime import datetime, timedelta

SESSION_COOKIE = "tidings_session"
SESSION_LIFETIME = timedelta(days=30)  # from the last time the session was seen
#: how stale a session's or token's "last seen" may get: using one writes at most this often
TOUCH_EVERY = timedelta(minutes=5)
TOKEN_PREFIX = "tdg_"  # noqa: S105 - a prefix, not a secret
CSRF_SECRET = "csrf"  # noqa: S105 - the name of the stored secret CSRF tokens derive from

_COOKIE = re.compile(r"[A-Za-z0-9_-]{43}")  # what secrets.token_urlsafe(32) makes


def digest(value: str) -> str:
    """SHA-256 of a random secret. A slow KDF adds nothing for 256 random bits, and a
    fast hash lets a request find its session or token in one indexed read."""
    return hashlib.sha256(value.encode()).hexdigest()


# ------------------------------------------------------------------ sessions


def new_cookie() -> str:
    return secrets.token_urlsafe(32)


def session_id(cookie: str | None) -> str | None:
    """The id a cookie stands for, or None when it is not one of ours (missing, or
    a signed cookie of older versions: those simply stop working)."""
    if cookie is None or not _COOKIE.fullmatch(cookie):
        return None
    return digest(cookie)


def due(last: datetime | None, now: datetime) -> bool:
    """Whether a session's or token's last use is stale enough to be written again."""
    return last is None or now - last >= TOUCH_EVERY


def csrf_token(secret: str, session: str) -> str:
    """Bound to the session: a token from another browser is worthless here."""
    return hmac.new(secret.encode(), f"csrf:{session}".encode(), hashlib.sha256).hexdigest()[:32]


def csrf_ok(secret: str, session: str, token: str | None) -> bool:
    if not token:
        return False
    return hmac.compare_digest(csrf_token(secret, session), token)


# ------------------------------------------------------------------ API tokens


def new_token() -> tuple[str, str, str]:
    """A new API token: its id, its value (shown once, never stored) and its digest."""
    value = TOKEN_PREFIX + secrets.token_urlsafe(30)
    return secrets.token_hex(6), value, digest(value)


def token_label(name: str) -> str:
    return name.strip()[:80] or "token"


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


_HOST_HEADER = re.compile(r"(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9_.-]{1,253})(:[0-9]{1,5})?")


def host_header_name(value: str) -> str | None:
    """The host part of a Host header (``[::1]:8080`` -> ``::1``); None unless the whole
    value is a name or address with an optional port (``[::1]x``, ``a:1@b`` are not)."""
    match = _HOST_HEADER.fullmatch(value.strip())
    if match is None:
        return None
    return match.group(1).strip("[]")
