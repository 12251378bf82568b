"""Sessions and tokens in storage (R-API-6): revocation, expiry, the sessions list, and
the import of an older install's web-auth.json."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from test_web_auth import PASSWORD, csrf_of
from test_web_support import (
    Clock,
    Spec,
    add_items,
    add_source,
    open_archive,
    run,
    serve_web,
    store_password,
    wait_until,
)
from tidings.app import Tidings, check_password, hash_password
from tidings.app.legacy import IMPORTED_SUFFIX, LEGACY_FILE
from tidings.cli import cli
from tidings.errors import ConfigError
from tidings.settings import Settings
from tidings.web import auth, check_listen

COOKIE = auth.SESSION_COOKIE
NEW_PASSWORD = "a brand new passphrase"


@dataclass
class Site:
    tid: Tidings
    url: str
    clock: Clock
    settings: Settings

    def client(self, agent: str = "Agent A", *, token: str | None = None,
               cookie: str | None = None) -> httpx.Client:
        headers = {"User-Agent": agent}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return httpx.Client(base_url=self.url, headers=headers,
                            cookies=None if cookie is None else {COOKIE: cookie})


@pytest.fixture
def site(settings: Settings) -> Iterator[Site]:
    clock = Clock()
    tid = Tidings.open(settings, create=True, clock=clock)
    add_source(tid, "alpha", "Alpha")
    add_items(tid, [Spec("A story", source_id="alpha")])
    store_password(tid, PASSWORD)
    server = serve_web(tid, settings)
    yield Site(tid, server.url, clock, settings)
    server.stop()
    tid.close()


def log_in(c: httpx.Client, password: str = PASSWORD) -> None:
    token = csrf_of(c.get("/login").text)
    done = c.post("/login", data={"password": password, "csrf": token})
    assert done.status_code == 303, done.text[:300]


def reads(c: httpx.Client) -> bool:
    status = c.get("/api/v1/items").status_code
    assert status in {200, 401}
    return status == 200


def test_logout_revokes_the_session_at_once(site: Site) -> None:
    with site.client() as c:
        log_in(c)
        old = c.cookies[COOKIE]
        assert reads(c)
        csrf = csrf_of(c.get("/all").text)
        assert c.post("/logout", data={"csrf": csrf}).status_code == 303
        assert c.cookies[COOKIE] != old and not reads(c)
    with site.client(cookie=old) as replay:  # the same cookie, kept by an attacker
        assert not reads(replay)
        assert replay.get("/all").status_code == 303
    assert site.tid.users.sessions() == []


def test_a_new_password_ends_every_other_session(site: Site) -> None:
    with site.client("Agent A") as a, site.client("Agent B") as b:
        log_in(a)
        log_in(b)
        assert reads(a) and reads(b)
        csrf = csrf_of(a.get("/settings").text)
        changed = a.post("/settings/password", data={
            "current": PASSWORD, "password": NEW_PASSWORD, "again": NEW_PASSWORD, "csrf": csrf})
        assert changed.status_code == 303 and changed.headers["location"] == "/settings?saved=1"
        assert reads(a)  # the session that changed it stays
        assert not reads(b)
        assert [s.user_agent for s in site.tid.users.sessions()] == ["Agent A"]
    with site.client() as c:
        token = csrf_of(c.get("/login").text)
        assert c.post("/login", data={"password": PASSWORD, "csrf": token}).status_code == 401
        log_in(c, NEW_PASSWORD)


def test_sessions_are_listed_and_logged_out_everywhere(site: Site) -> None:
    with site.client("Agent B") as b, site.client("Agent A") as a, site.client("Bot") as visitor:
        log_in(b)
        site.clock.advance(minutes=1)
        log_in(a)
        assert visitor.get("/login").status_code == 200  # a visitor is not a session
        page = a.get("/settings")
        listed = re.findall(r'<li( class="this-session")?><span>([^<]*)</span>', page.text)
        assert listed == [(' class="this-session"', "Agent A"), ("", "Agent B")]
        assert page.text.count("<strong>this one</strong>") == 1 and "127.0.0.1" in page.text
        ended = a.post("/settings/sessions/end", data={"csrf": csrf_of(page.text)})
        assert ended.status_code == 303 and ended.headers["location"] == "/login"
        assert not reads(a) and not reads(b)
        assert site.tid.users.sessions() == []
        gone = a.get("/settings")  # to the login page, and back here after it
        assert gone.status_code == 303 and gone.headers["location"] == "/login?next=/settings"
        log_in(a)
        again = a.get("/settings").text
        listed = re.findall(r'<li( class="this-session")?><span>([^<]*)</span>', again)
        assert listed == [(' class="this-session"', "Agent A")]  # Agent B stays logged out
        assert len(site.tid.users.sessions()) == 1


def test_tokens_from_the_settings_page_work_until_revoked(site: Site) -> None:
    with site.client() as c:
        log_in(c)
        made = c.post("/settings/tokens", data={"name": "phone", "csrf": csrf_of(
            c.get("/settings").text)})
        match = re.search(r'<code id="new-token">([^<]+)</code>', made.text)
        assert made.status_code == 200 and match
        value = match.group(1)
        with site.client(token=value) as api:
            assert reads(api)
            wait_until(lambda: site.tid.tokens.all()[0].last_used_at is not None)
            (token,) = site.tid.tokens.all()
            assert token.name == "phone" and token.last_used_at == site.clock.now
            page = c.get("/settings").text
            assert "phone" in page and value not in page  # shown once only
            revoke = re.search(r'/settings/tokens/([0-9a-f]+)/delete', page)
            assert revoke and revoke.group(1) == token.id
            gone = c.post(f"/settings/tokens/{token.id}/delete", data={"csrf": csrf_of(page)})
            assert gone.status_code == 303
            assert api.get("/api/v1/items").status_code == 401
        assert site.tid.tokens.all() == []


def test_expired_sessions_are_refused(site: Site) -> None:
    with site.client() as c:
        log_in(c)
        site.clock.advance(days=29)
        assert reads(c)  # seen again: it lives 30 days from now
        wait_until(lambda: site.tid.users.sessions()[0].last_seen_at == site.clock.now)
        site.clock.advance(days=29)
        assert reads(c)
        site.clock.advance(days=30, seconds=1)
        assert not reads(c)
        assert c.get("/all").status_code == 303
    assert site.tid.users.sessions() == []


def test_last_seen_is_written_every_few_minutes_not_every_request(site: Site) -> None:
    with site.client() as c:
        log_in(c)
        (first,) = site.tid.users.sessions()
        assert first.last_seen_at == first.created_at == site.clock.now
        site.clock.advance(minutes=1)
        for _ in range(5):
            assert reads(c)
        assert site.tid.users.sessions() == [first]  # not one write
        assert "set-cookie" not in c.get("/all").headers
        site.clock.advance(minutes=auth.TOUCH_EVERY.total_seconds() / 60)
        page = c.get("/all")
        assert page.cookies.get(COOKIE) == c.cookies[COOKIE]  # the browser's copy slides too
        wait_until(lambda: site.tid.users.sessions()[0].last_seen_at == site.clock.now)
        (seen,) = site.tid.users.sessions()
        assert seen.last_seen_at == site.clock.now
        assert seen.expires_at == site.clock.now + auth.SESSION_LIFETIME


def test_set_password_from_the_cli_ends_every_session(site: Site) -> None:
    with site.client() as c:
        log_in(c)
        assert reads(c)
        result = CliRunner().invoke(
            cli, ["--data", str(site.settings.data_dir), "set-password", "--stdin"],
            input=NEW_PASSWORD + "\n", env={"TIDINGS_ADMIN_PASSWORD": None})
        assert result.exit_code == 0, result.output
        assert not reads(c)
        log_in(c, NEW_PASSWORD)
        assert reads(c)


def test_signed_cookies_of_older_versions_stop_working(site: Site) -> None:
    old = "eyJuIjoiYWJjIiwiYSI6dHJ1ZSwieCI6OTk5OTk5OTk5OSwiZSI6MH0=." + "0" * 64
    with site.client(cookie=old) as c:
        assert not reads(c)
        fresh = c.get("/login")
        assert fresh.status_code == 200
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", fresh.cookies[COOKIE])
        log_in(c)
        assert reads(c)


# ------------------------------------------------------- an older install's file


def write_legacy(data_dir: Path, password_hash: str, token_value: str) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / LEGACY_FILE
    path.write_text(json.dumps({
        "secret": "the old signing secret", "epoch": 3, "password_hash": password_hash,
        "tokens": [{"id": "0a1b2c3d4e5f", "name": "phone", "digest": auth.digest(token_value),
                    "created_at": "2025-01-02T03:04:05+00:00"}],
    }))
    return path


def test_an_old_web_auth_file_is_imported_once(settings: Settings) -> None:
    value = "tdg_" + "k" * 40
    legacy = write_legacy(settings.data_dir, hash_password(PASSWORD), value)
    tid = open_archive(settings)
    server = serve_web(tid, settings)
    try:
        with httpx.Client(base_url=server.url) as c:
            assert c.get("/api/v1/items",  # the first request takes the file in
                         headers={"Authorization": f"Bearer {value}"}).status_code == 200
            assert not legacy.exists()
            assert legacy.with_name(LEGACY_FILE + IMPORTED_SUFFIX).exists()
            log_in(c)  # the old password
            assert reads(c)
        (token,) = tid.tokens.all()
        assert (token.id, token.name) == ("0a1b2c3d4e5f", "phone")
        assert token.created_at == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
        check_listen(tid, "0.0.0.0")  # a password exists
        assert run(tid.users.import_legacy) is False  # nothing left to import
    finally:
        server.stop()
        tid.close()


def test_a_second_import_keeps_a_newer_password(settings: Settings) -> None:
    """A crash between the import and the rename, or set-password on an old install."""
    value = "tdg_" + "q" * 40
    legacy = write_legacy(settings.data_dir, hash_password(PASSWORD), value)
    tid = open_archive(settings)
    try:
        store_password(tid, NEW_PASSWORD)  # imports the file first: its token stays valid
        assert not legacy.exists() and len(tid.tokens.all()) == 1
        write_legacy(settings.data_dir, hash_password(PASSWORD), value)
        assert run(tid.users.import_legacy) is True
        user = tid.users.user()
        assert user is not None and check_password(user.password_hash, NEW_PASSWORD)
        assert not check_password(user.password_hash, PASSWORD)
        assert len(tid.tokens.all()) == 1
    finally:
        tid.close()


def test_an_unreadable_old_file_is_one_line_not_a_traceback(settings: Settings) -> None:
    settings.data_dir.mkdir(parents=True)
    (settings.data_dir / LEGACY_FILE).write_text("{not json")
    tid = open_archive(settings)
    server = serve_web(tid, settings)
    try:
        with pytest.raises(ConfigError, match="unreadable auth file"):
            run(tid.users.import_legacy)
        with httpx.Client(base_url=server.url) as c:
            page = c.get("/")
            assert page.status_code == 503 and "unreadable auth file" in page.text
            assert "Traceback" not in page.text and page.text.count("\n") == 1
    finally:
        server.stop()
        tid.close()
