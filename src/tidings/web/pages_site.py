"""Login, settings and API tokens, and the files that make the reader an app.

The service worker is served from ``/sw.js`` (not ``/static/``) so that its
scope is the whole site (R-UI-5).
"""

from __future__ import annotations

import time
from collections import deque
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import FileResponse, PlainTextResponse, RedirectResponse, Response

from tidings.app import MIN_PASSWORD
from tidings.settings import VERSION
from tidings.web import auth
from tidings.web.context import (
    client_address,
    form_with_csrf,
    log_in,
    render,
    require_admin,
    safe_next,
    set_session_cookie,
    viewer,
    web_state,
)

router = APIRouter(include_in_schema=False)
STATIC = Path(__file__).parent / "static"

_LOGIN_WINDOW = 300.0
_LOGIN_FAILURES = 10


def _too_many_failures(failures: dict[str, deque[float]], client: str) -> bool:
    now = time.monotonic()
    seen = failures.setdefault(client, deque())
    while seen and now - seen[0] > _LOGIN_WINDOW:
        seen.popleft()
    return len(seen) >= _LOGIN_FAILURES


@router.get("/login")
async def login_form(request: Request, next: str = "/") -> Response:
    st = web_state(request)
    return render(request, "login.html", {"title": "Log in", "next": safe_next(next),
                                          "error": "", "has_password": st.has_password})


@router.post("/login")
async def login(request: Request) -> Response:
    form = await form_with_csrf(request)
    st = web_state(request)
    client = client_address(request)
    target = safe_next(form.get("next"))
    failures = st.login_failures
    if _too_many_failures(failures, client):
        raise HTTPException(429, "too many failed logins; wait a few minutes")
    password = str(form.get("password") or "")
    if not st.has_password or not await run_in_threadpool(st.password_ok, password):
        failures.setdefault(client, deque()).append(time.monotonic())
        ctx = {"title": "Log in", "next": target, "has_password": st.has_password,
               "error": "wrong password" if st.has_password else "no password is set yet"}
        return render(request, "login.html", ctx, status=401)
    failures.pop(client, None)
    response = RedirectResponse(target, status_code=303)
    await log_in(request, response)
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    """End this session: its row goes, so the cookie is worthless from now on."""
    await form_with_csrf(request)
    who = viewer(request)
    if who.session is not None:
        await web_state(request).tidings.users.end_session(who.session.id)
    response = RedirectResponse("/login", status_code=303)
    set_session_cookie(request, response, auth.new_cookie())
    return response


def _settings_context(request: Request, **extra: Any) -> dict[str, Any]:
    st = web_state(request)
    s = st.settings
    shown = {"data directory": str(s.data_dir), "listen": f"{s.host}:{s.port}",
             "public reading": "yes" if s.public_reading else "no",
             "default interval": f"{s.default_interval_min} min",
             "database": "PostgreSQL" if s.database_url else "SQLite", "version": VERSION}
    return {"title": "Settings", "shown": shown, "tokens": st.tidings.tokens.all(),
            "sessions": st.tidings.users.sessions(), "this_session": viewer(request).session_id,
            "env_password": bool(s.admin_password), "new_token": "", "error": "",
            "message": "", **extra}


@router.get("/settings")
async def settings_page(request: Request) -> Response:
    require_admin(request)
    return render(request, "settings.html", _settings_context(request))


@router.post("/settings/password")
async def change_password(request: Request) -> Response:
    """A new password ends every other session; this one stays logged in."""
    who = require_admin(request)
    form = await form_with_csrf(request)
    st = web_state(request)
    new, again = str(form.get("password") or ""), str(form.get("again") or "")
    current = str(form.get("current") or "")
    if st.has_password and not await run_in_threadpool(st.password_ok, current):
        error = "the current password is wrong"
    elif new != again:
        error = "the two new passwords differ"
    elif len(new) < MIN_PASSWORD:
        error = f"the password needs at least {MIN_PASSWORD} characters"
    else:
        keep = who.session.id if who.session is not None else None
        await st.tidings.users.set_password(new, keep_session=keep)
        st.password_changed()
        st.changed()
        response = RedirectResponse("/settings?saved=1", status_code=303)
        if keep is None:  # admin without a login (first run): stay admin from now on
            await log_in(request, response)
        return response
    return render(request, "settings.html", _settings_context(request, error=error), status=400)


@router.post("/settings/sessions/end")
async def end_sessions(request: Request) -> Response:
    """Log out everywhere, this browser included."""
    require_admin(request)
    await form_with_csrf(request)
    await web_state(request).tidings.users.end_sessions()
    response = RedirectResponse("/login", status_code=303)
    set_session_cookie(request, response, auth.new_cookie())
    return response


@router.post("/settings/tokens")
async def create_token(request: Request) -> Response:
    require_admin(request)
    form = await form_with_csrf(request)
    token_id, value, digest = auth.new_token()
    await web_state(request).tidings.tokens.add(
        token_id, auth.token_label(str(form.get("name") or "")), digest)
    await web_state(request).tidings.compat.remember_fever_key(token_id, value)  # Fever logins
    return render(request, "settings.html", _settings_context(request, new_token=value))


@router.post("/settings/tokens/{token_id}/delete")
async def delete_token(request: Request, token_id: str) -> Response:
    require_admin(request)
    await form_with_csrf(request)
    await web_state(request).tidings.tokens.revoke(token_id)
    return RedirectResponse("/settings", status_code=303)


@router.get("/offline")
async def offline(request: Request) -> Response:
    """The page the service worker shows for a page it has not kept."""
    viewer(request)
    return render(request, "offline.html", {"title": "Offline"})


@router.get("/sw.js")
async def service_worker() -> Response:
    return FileResponse(STATIC / "sw.js", media_type="text/javascript",
                        headers={"Cache-Control": "no-cache", "Service-Worker-Allowed": "/"})


@router.get("/manifest.webmanifest")
async def manifest() -> Response:
    return FileResponse(STATIC / "manifest.webmanifest", media_type="application/manifest+json")


@router.get("/favicon.ico")
async def favicon() -> Response:
    return FileResponse(STATIC / "icon-192.png", media_type="image/png")


@router.get("/healthz")
async def healthz() -> Response:
    """Liveness, and the framework's ceiling in benchmarks/web.py."""
    return PlainTextResponse("ok")
