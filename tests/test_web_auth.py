"""Access (R-API-6): loopback-only first run, login, sessions, CSRF, tokens, public mode."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest
from argon2 import PasswordHasher

from test_web_support import (
    Spec,
    add_items,
    add_source,
    new_token,
    open_archive,
    run,
    serve_web,
    store_password,
)
from tidings.app import Tidings, passwords
from tidings.app.legacy import LEGACY_FILE
from tidings.errors import ConfigError
from tidings.model import Visibility
from tidings.settings import Settings
from tidings.web import auth, check_listen, create_app

PASSWORD = "correct horse battery"


def csrf_of(html: str) -> str:
    match = re.search(r'<meta name="csrf" content="([^"]+)"', html)
    assert match, html[:500]
    return match.group(1)


@pytest.fixture
def tid(settings: Settings) -> Iterator[Tidings]:
    archive = open_archive(settings)
    add_source(archive, "alpha", "Alpha")
    add_source(archive, "hidden", "Hidden", visibility=Visibility.ISOLATED)
    add_items(archive, [Spec("Public story", source_id="alpha"),
                        Spec("Secret story", source_id="hidden")])
    yield archive
    archive.close()


def asgi_get(app: object, path: str, client: tuple[str, int], host: str = "127.0.0.1"
             ) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=client)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{host}") as c:
            return await c.get(path)
    return asyncio.run(go())


def test_open_mode_serves_loopback_only_with_a_banner(tid: Tidings, settings: Settings) -> None:
    app = create_app(tid, settings, page_ttl=0)
    local = asgi_get(app, "/", ("127.0.0.1", 5000))
    assert local.status_code == 200
    assert "No admin password is set" in local.text and "tidings set-password" in local.text
    remote = asgi_get(app, "/", ("192.0.2.7", 5000))
    assert remote.status_code == 403 and "set-password" in remote.text
    assert asgi_get(app, "/api/v1/items", ("::1", 5000)).status_code == 200
    rebound = asgi_get(app, "/", ("127.0.0.1", 5000), host="attacker.example")
    assert rebound.status_code == 421  # DNS rebinding: a foreign Host name is refused


def test_non_loopback_listen_without_password_is_refused(
    tid: Tidings, settings: Settings,
) -> None:
    check_listen(tid, "127.0.0.1")
    check_listen(tid, "localhost")
    with pytest.raises(ConfigError, match="no admin password"):
        check_listen(tid, "0.0.0.0")
    with_env = open_archive(replace(settings, admin_password=PASSWORD))
    try:
        check_listen(with_env, "0.0.0.0")
    finally:
        with_env.close()
    store_password(tid, PASSWORD)
    check_listen(tid, "0.0.0.0")


def test_password_is_stored_as_a_slow_hash(
    tid: Tidings, settings: Settings, production_hasher: PasswordHasher,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(passwords, "_hasher", production_hasher)  # conftest: cheap elsewhere
    store_password(tid, PASSWORD)
    user = tid.users.user()
    assert user is not None and user.is_admin
    assert PASSWORD not in user.password_hash
    assert user.password_hash.startswith("$argon2id$v=19$m=65536,t=3,p=4$")  # RFC 9106's
    assert passwords.check_password(user.password_hash, PASSWORD)
    assert not (settings.data_dir / LEGACY_FILE).exists()  # nothing beside the archive
    with pytest.raises(ConfigError, match="at least"):
        store_password(tid, "short")


def test_private_mode_login_session_and_csrf(tid: Tidings, settings: Settings) -> None:
    store_password(tid, PASSWORD)
    server = serve_web(tid, settings)
    try:
        with httpx.Client(base_url=server.url) as c:
            gate = c.get("/all")
            assert gate.status_code == 303 and gate.headers["location"] == "/login?next=/all"
            assert c.get("/api/v1/items").status_code == 401
            form = c.get("/login")
            token = csrf_of(form.text)
            assert c.post("/login", data={"password": PASSWORD, "csrf": "x"}).status_code == 403
            wrong = c.post("/login", data={"password": "nope", "csrf": token})
            assert wrong.status_code == 401 and "wrong password" in wrong.text
            ok = c.post("/login", data={"password": PASSWORD, "csrf": token, "next": "/all"})
            assert ok.status_code == 303 and ok.headers["location"] == "/all"
            cookie = ok.headers["set-cookie"]
            assert "HttpOnly" in cookie and "SameSite=lax" in cookie.replace("Lax", "lax")
            page = c.get("/all")
            assert page.status_code == 200 and "Secret story" in page.text
            item_id = int(re.findall(r'data-id="(\d+)"', page.text)[0])
            no_header = c.patch(f"/api/v1/items/{item_id}", json={"starred": True})
            assert no_header.status_code == 403
            csrf = csrf_of(page.text)
            done = c.patch(f"/api/v1/items/{item_id}", json={"starred": True},
                           headers={"X-CSRF-Token": csrf})
            assert done.status_code == 200 and done.json()["starred"] is True
            store_password(tid, "another long password")  # logs every session out
            assert c.get("/all").status_code == 303  # at once, even from another process
    finally:
        server.stop()


def test_changing_the_password_ends_existing_sessions(tid: Tidings, settings: Settings) -> None:
    store_password(tid, PASSWORD)
    cookie = auth.new_cookie()
    sid = auth.session_id(cookie)
    assert sid is not None
    run(lambda: tid.users.start_session(sid, auth.SESSION_LIFETIME))
    assert tid.users.session(sid) is not None
    store_password(tid, "another long password")
    assert tid.users.session(sid) is None
    assert auth.session_id(cookie + "0") is None
    assert auth.session_id("garbage.cookie") is None


def test_api_tokens(tid: Tidings, settings: Settings) -> None:
    store_password(tid, PASSWORD)
    value = new_token(tid, "phone")
    (stored,) = tid.tokens.all()
    assert value.startswith("tdg_") and stored.digest == auth.digest(value)
    assert value not in repr(stored)  # only its hash is kept
    server = serve_web(tid, settings)
    try:
        with httpx.Client(base_url=server.url) as c:
            good = {"Authorization": f"Bearer {value}"}
            items = c.get("/api/v1/items", headers=good)
            assert items.status_code == 200 and len(items.json()["items"]) == 2
            item_id = items.json()["items"][0]["id"]
            marked = c.post("/api/v1/items/state", json={"ids": [item_id], "read": True},
                            headers=good)  # a token needs no CSRF header
            assert marked.status_code == 200 and marked.json() == {"updated": 1}
            bad = c.get("/api/v1/items", headers={"Authorization": "Bearer tdg_wrong"})
            assert bad.status_code == 401
            token_id = tid.tokens.all()[0].id
            assert run(lambda: tid.tokens.revoke(token_id))
            assert c.get("/api/v1/items", headers=good).status_code == 401
    finally:
        server.stop()


def test_public_reading_is_read_only_and_hides_isolated_sources(
    tid: Tidings, settings: Settings,
) -> None:
    settings = replace(settings, public_reading=True)
    store_password(tid, PASSWORD)
    server = serve_web(tid, settings)
    try:
        with httpx.Client(base_url=server.url) as c:
            page = c.get("/all")
            assert page.status_code == 200
            assert "Public story" in page.text and "Secret story" not in page.text
            assert "Mark all above as read" not in page.text and "Log in" in page.text
            api = c.get("/api/v1/items").json()["items"]
            assert [i["title"] for i in api] == ["Public story"]
            secret = next(i for i in tid.items.query() if i.source_id == "hidden")
            assert c.get(f"/item/{secret.id}").status_code == 404
            assert c.get(f"/api/v1/items/{secret.id}").status_code == 404
            assert c.get("/source/hidden").status_code == 404
            assert c.get("/sources").status_code == 303  # admin pages need the login
            write = c.post("/api/v1/items/state", json={"ids": [1], "read": True},
                           headers={"X-CSRF-Token": csrf_of(page.text)})
            assert write.status_code == 401
            assert c.post("/mark-read", data={"ids": "1", "csrf": csrf_of(page.text)}
                          ).status_code == 303  # to the login page, nothing changed
            assert not any(i.read for i in tid.items.query())
    finally:
        server.stop()


def test_login_failures_are_rate_limited(tid: Tidings, settings: Settings) -> None:
    store_password(tid, PASSWORD)
    server = serve_web(tid, settings)
    try:
        with httpx.Client(base_url=server.url) as c:
            token = csrf_of(c.get("/login").text)
            codes = [c.post("/login", data={"password": f"guess{i}", "csrf": token}).status_code
                     for i in range(11)]
            assert codes[:10] == [401] * 10 and codes[10] == 429
            blocked = c.post("/login", data={"password": PASSWORD, "csrf": token})
            assert blocked.status_code == 429
    finally:
        server.stop()
