"""Access (R-API-6): loopback-only first run, login, sessions, CSRF, tokens, public mode."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest

from test_web_support import ServerThread, Spec, add_items, add_source, open_archive
from tidings.app import Tidings
from tidings.errors import ConfigError
from tidings.model import Visibility
from tidings.settings import Settings
from tidings.web import auth, check_listen, create_app, set_password

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


def serve_app(tid: Tidings, settings: Settings) -> ServerThread:
    return ServerThread(create_app(tid, settings, page_ttl=0)).start()


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


def test_non_loopback_listen_without_password_is_refused(settings: Settings) -> None:
    check_listen(settings, "127.0.0.1")
    check_listen(settings, "localhost")
    with pytest.raises(ConfigError, match="no admin password"):
        check_listen(settings, "0.0.0.0")
    check_listen(replace(settings, admin_password=PASSWORD), "0.0.0.0")
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    set_password(settings, PASSWORD)
    check_listen(settings, "0.0.0.0")


def test_password_is_stored_as_a_slow_hash(settings: Settings) -> None:
    set_password(settings, PASSWORD)
    text = auth.auth_path(settings).read_text()
    assert PASSWORD not in text and "$argon2id$" in text
    assert auth.auth_path(settings).stat().st_mode & 0o077 == 0
    with pytest.raises(ConfigError, match="at least"):
        set_password(settings, "short")


def test_private_mode_login_session_and_csrf(tid: Tidings, settings: Settings) -> None:
    set_password(settings, PASSWORD)
    server = serve_app(tid, settings)
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
            set_password(settings, "another long password")  # logs every session out
            assert c.get("/all").status_code in {200, 303}
    finally:
        server.stop()


def test_changing_the_password_ends_existing_sessions(tid: Tidings, settings: Settings) -> None:
    set_password(settings, PASSWORD)
    state = auth.load_state(settings)
    cookie = auth.encode_session(state, auth.new_session(admin=True))
    assert auth.decode_session(state, cookie) is not None
    set_password(settings, "another long password")
    assert auth.decode_session(auth.load_state(settings), cookie) is None
    assert auth.decode_session(state, cookie + "0") is None
    assert auth.decode_session(state, "garbage.cookie") is None


def test_api_tokens(tid: Tidings, settings: Settings) -> None:
    set_password(settings, PASSWORD)
    value = auth.new_token(settings, "phone")
    assert value.startswith("tdg_") and value not in auth.auth_path(settings).read_text()
    server = serve_app(tid, settings)
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
            token_id = auth.load_state(settings).tokens[0].id
            assert auth.revoke_token(settings, token_id)
            assert c.get("/api/v1/items", headers=good).status_code == 401
    finally:
        server.stop()


def test_public_reading_is_read_only_and_hides_isolated_sources(
    tid: Tidings, settings: Settings,
) -> None:
    settings = replace(settings, public_reading=True)
    set_password(settings, PASSWORD)
    server = serve_app(tid, settings)
    try:
        with httpx.Client(base_url=server.url) as c:
            page = c.get("/all")
            assert page.status_code == 200
            assert "Public story" in page.text and "Secret story" not in page.text
            assert "Mark all above as read" not in page.text and "Log in" in page.text
            api = c.get("/api/v1/items").json()["items"]
            assert [i["title"] for i in api] == ["Public story"]
            secret = next(i for i in tid.items() if i.source_id == "hidden")
            assert c.get(f"/item/{secret.id}").status_code == 404
            assert c.get(f"/api/v1/items/{secret.id}").status_code == 404
            assert c.get("/source/hidden").status_code == 404
            assert c.get("/sources").status_code == 303  # admin pages need the login
            write = c.post("/api/v1/items/state", json={"ids": [1], "read": True},
                           headers={"X-CSRF-Token": csrf_of(page.text)})
            assert write.status_code == 401
            assert c.post("/mark-read", data={"ids": "1", "csrf": csrf_of(page.text)}
                          ).status_code == 303  # to the login page, nothing changed
            assert not any(i.read for i in tid.items())
    finally:
        server.stop()


def test_login_failures_are_rate_limited(tid: Tidings, settings: Settings) -> None:
    set_password(settings, PASSWORD)
    server = serve_app(tid, settings)
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
