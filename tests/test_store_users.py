"""Contract: web access (R-API-6): users, logged-in sessions, API tokens, secrets."""

from __future__ import annotations

from datetime import timedelta

import pytest

from storage_contract import T0, at
from tidings.errors import ConfigError, NotFoundError
from tidings.store.base import Storage
from tidings.store.users import ApiToken, User, WebSession

DAYS_30 = timedelta(days=30)


def admin(storage: Storage, password_hash: str = "$argon2id$h1") -> User:
    return storage.add_user("admin", password_hash, True, T0)


def session(sid: str, user: User, minutes: float = 0, **kw: object) -> WebSession:
    values: dict[str, object] = {"admin": user.is_admin, "created_at": at(minutes),
                                 "expires_at": at(minutes) + DAYS_30,
                                 "last_seen_at": at(minutes), **kw}
    return WebSession(id=sid, user_id=user.id, **values)  # type: ignore[arg-type]


def token(tid: str, user: User, minutes: float = 0) -> ApiToken:
    return ApiToken(id=tid, user_id=user.id, name=f"name {tid}", digest=f"digest-{tid}",
                    created_at=at(minutes))


def test_users_and_password_hashes(storage: Storage) -> None:
    assert storage.find_user("admin") is None
    user = admin(storage, "")
    assert user == User(id=user.id, name="admin", password_hash="", is_admin=True,
                        created_at=T0, password_changed_at=None)
    assert storage.find_user("admin") == user
    with pytest.raises(ConfigError, match="taken"):
        storage.add_user("admin", "x", False, T0)
    changed = storage.set_password_hash(user.id, "$argon2id$h2", at(5))
    assert changed.password_hash == "$argon2id$h2" and changed.password_changed_at == at(5)
    assert storage.find_user("admin") == changed
    with pytest.raises(NotFoundError):
        storage.set_password_hash(user.id + 100, "x", at(5))
    reader = storage.add_user("reader", "", False, T0)
    assert reader.id != user.id and not reader.is_admin


def test_a_session_is_found_until_it_expires(storage: Storage) -> None:
    user = admin(storage)
    stored = session("s1", user, user_agent="Firefox", ip="127.0.0.1")
    storage.add_session(stored)
    assert storage.find_session("s1", at(1)) == stored
    assert storage.find_session("s2", at(1)) is None
    assert storage.find_session("s1", stored.expires_at - timedelta(microseconds=1)) == stored
    assert storage.find_session("s1", stored.expires_at) is None
    with pytest.raises(NotFoundError):
        storage.add_session(session("s9", User(999, "ghost", "", False, T0)))


def test_touch_moves_last_seen_and_expiry(storage: Storage) -> None:
    user = admin(storage)
    storage.add_session(session("s1", user))
    assert storage.touch_session("s1", at(10), at(10) + DAYS_30)
    found = storage.find_session("s1", at(11))
    assert found is not None and found.last_seen_at == at(10)
    assert found.expires_at == at(10) + DAYS_30 and found.created_at == T0
    assert storage.find_session("s1", T0 + DAYS_30 + timedelta(minutes=5)) is not None
    assert not storage.touch_session("gone", at(10), at(20))


def test_ending_sessions(storage: Storage) -> None:
    user = admin(storage)
    other = storage.add_user("reader", "", False, T0)
    for n in range(3):
        storage.add_session(session(f"s{n}", user, minutes=n))
    storage.add_session(session("r0", other))
    assert [s.id for s in storage.list_sessions(user.id, at(5))] == ["s2", "s1", "s0"]
    assert storage.delete_session("s0") and not storage.delete_session("s0")
    assert storage.find_session("s0", at(5)) is None
    assert storage.delete_sessions(user.id, keep="s2") == 1
    assert [s.id for s in storage.list_sessions(user.id, at(5))] == ["s2"]
    assert storage.delete_sessions(user.id) == 1
    assert storage.list_sessions(user.id, at(5)) == []
    assert [s.id for s in storage.list_sessions(other.id, at(5))] == ["r0"]  # not theirs


def test_expired_sessions_are_not_listed_and_are_pruned(storage: Storage) -> None:
    user = admin(storage)
    storage.add_session(session("old", user, expires_at=at(10)))
    storage.add_session(session("new", user, expires_at=at(100)))
    assert [s.id for s in storage.list_sessions(user.id, at(10))] == ["new"]
    assert storage.prune_sessions(at(10)) == 1
    assert storage.prune_sessions(at(10)) == 0
    assert storage.find_session("new", at(10)) is not None


def test_api_tokens(storage: Storage) -> None:
    user = admin(storage)
    other = storage.add_user("reader", "", False, T0)
    first, second = token("t1", user), token("t2", user, minutes=1)
    storage.add_api_token(second)
    storage.add_api_token(first)
    storage.add_api_token(token("o1", other))
    assert storage.list_api_tokens(user.id) == [first, second]  # oldest first
    assert storage.find_api_token("digest-t2") == second
    assert storage.find_api_token("digest-none") is None
    with pytest.raises(ConfigError):
        storage.add_api_token(token("t1", user))
    with pytest.raises(ConfigError):
        storage.add_api_token(ApiToken("t3", user.id, "copy", "digest-t1", T0))
    with pytest.raises(NotFoundError):
        storage.add_api_token(token("x", User(999, "ghost", "", False, T0)))
    assert storage.touch_api_token("t1", at(7))
    used = storage.find_api_token("digest-t1")
    assert used is not None and used.last_used_at == at(7)
    assert not storage.delete_api_token(other.id, "t1")  # only its owner revokes it
    assert storage.delete_api_token(user.id, "t1")
    assert storage.find_api_token("digest-t1") is None and not storage.touch_api_token("t1", T0)
    assert [t.id for t in storage.list_api_tokens(user.id)] == ["t2"]


def test_the_first_secret_stored_wins(storage: Storage) -> None:
    assert storage.ensure_secret("csrf", "first") == "first"
    assert storage.ensure_secret("csrf", "second") == "first"
    assert storage.ensure_secret("other", "second") == "second"


def test_a_unit_stores_a_password_and_ends_sessions_together(storage: Storage) -> None:
    user = admin(storage)
    storage.add_session(session("s1", user))
    storage.add_session(session("s2", user))
    with pytest.raises(RuntimeError), storage.write() as unit:
        unit.set_password_hash(user.id, "new", at(1))
        unit.delete_sessions(user.id, keep="s1")
        raise RuntimeError("abandoned")
    assert storage.find_session("s2", at(2)) is not None
    found = storage.find_user("admin")
    assert found is not None and found.password_hash == user.password_hash
    with storage.write() as unit:
        unit.set_password_hash(user.id, "new", at(1))
        assert unit.delete_sessions(user.id, keep="s1") == 1
        assert [s.id for s in unit.list_sessions(user.id, at(2))] == ["s1"]
    assert storage.find_session("s2", at(2)) is None
