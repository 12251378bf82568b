"""Password hashes of the web reader's users (argon2id, through argon2-cffi).

Here rather than in ``web`` because setting a password is a use case of its own
(``tidings set-password``, the settings page) and not a part of serving pages.
"""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from tidings.errors import ConfigError

MIN_PASSWORD = 8

_hasher = PasswordHasher()


def hash_password(password: str) -> str:
    """The stored form of a new password; ConfigError when it is too short."""
    if len(password) < MIN_PASSWORD:
        raise ConfigError(f"the password needs at least {MIN_PASSWORD} characters")
    return _hasher.hash(password)


def check_password(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False
