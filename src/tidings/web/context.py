"""Per-request context: who is asking, and how pages are answered.

A request is identified by one indexed read: its API token or its logged-in
session, looked up by the hash of what the client sent. Every browser gets a
session cookie on its first page, even before logging in: the CSRF token of its
forms is derived from it (R-API-6), which is what keeps another site from
posting "mark all as read" through the user's browser, even in the
password-less loopback mode. Only a login makes that cookie's hash a stored
session; logging out deletes it, so the cookie is worth nothing from then on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import HTTPException, Request
from starlette.responses import RedirectResponse, Response

from tidings.app import ApiToken, WebSession
from tidings.web import auth
from tidings.web.state import CSRF_PLACEHOLDER, WebState

CSRF_HEADER = "x-csrf-token"
USER_AGENT_CHARS = 300


@dataclass(frozen=True, slots=True)
class Viewer:
    admin: bool
    can_read: bool
    session_id: str  # what CSRF tokens are bound to: the stored session's, or the visitor's
    session: WebSession | None  # the logged-in session, if any
    token: ApiToken | None  # the API token the request came with, if any
    new_cookie: str | None  # to (re)send: a visitor's first, or a session's that slid on

    @property
    def via_token(self) -> bool:
        return self.token is not None

    @property
    def role(self) -> str:
        return "admin" if self.admin else ("reader" if self.can_read else "anon")


def web_state(request: Request) -> WebState:
    state: WebState = request.app.state.web
    return state


def viewer(request: Request) -> Viewer:
    """Who is asking (reads only; :func:`keep_alive` writes what the request used)."""
    cached: Viewer | None = getattr(request.state, "viewer", None)
    if cached is not None:
        return cached
    st = web_state(request)
    token = _bearer(request, st)
    cookie = request.cookies.get(auth.SESSION_COOKIE)
    sid = auth.session_id(cookie)
    session, new_cookie = None, None
    if sid is None:
        new_cookie = auth.new_cookie()
        sid = auth.digest(new_cookie)
    elif token is None:
        session = st.tidings.users.session(sid)
        if session is not None and auth.due(session.last_seen_at, st.tidings.clock()):
            new_cookie = cookie  # the browser's copy expires later too
    mode = st.mode
    admin = token is not None or mode == "open" or (session is not None and session.admin)
    result = Viewer(admin=admin, can_read=admin or mode == "public", session_id=sid,
                    session=session, token=token, new_cookie=new_cookie)
    request.state.viewer = result
    return result


def _bearer(request: Request, st: WebState) -> ApiToken | None:
    header = request.headers.get("authorization", "")
    if header[:7].lower() != "bearer ":
        return None
    token = st.tidings.tokens.find(auth.digest(header[7:].strip()))
    if token is None:
        raise HTTPException(401, "invalid API token", {"WWW-Authenticate": "Bearer"})
    return token


async def keep_alive(request: Request) -> None:
    """Every route's first dependency: record that its session or token is in use.

    Through the writer, and only when the last record is older than
    ``auth.TOUCH_EVERY``: a request as a rule writes nothing. A session seen again
    lives ``auth.SESSION_LIFETIME`` from then on. The write runs in the background
    (``WebState.touch``): the page does not wait for the writer.
    """
    who = viewer(request)
    st = web_state(request)
    now = st.tidings.clock()
    if who.session is not None and auth.due(who.session.last_seen_at, now):
        sid = who.session.id
        st.touch(sid, lambda: st.tidings.users.touch_session(sid, auth.SESSION_LIFETIME))
    if who.token is not None and auth.due(who.token.last_used_at, now):
        tid = who.token.id
        st.touch(tid, lambda: st.tidings.tokens.touch(tid))


async def log_in(request: Request, response: Response) -> None:
    """Start a new admin session for this browser (a fresh cookie: never the visitor's
    own, which a page of another site might have planted)."""
    st = web_state(request)
    cookie = auth.new_cookie()
    agent = request.headers.get("user-agent", "")[:USER_AGENT_CHARS]
    await st.tidings.users.start_session(auth.digest(cookie), auth.SESSION_LIFETIME,
                                         user_agent=agent, ip=client_address(request))
    set_session_cookie(request, response, cookie)


def client_address(request: Request) -> str:
    return request.client.host if request.client else "?"


def set_session_cookie(request: Request, response: Response, value: str) -> None:
    response.set_cookie(
        auth.SESSION_COOKIE, value, max_age=int(auth.SESSION_LIFETIME.total_seconds()),
        httponly=True, samesite="lax", secure=request.url.scheme == "https", path="/",
    )


class LoginRequired(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by page handlers; answered with a redirect to the login page."""


def require_reader(request: Request) -> Viewer:
    who = viewer(request)
    if not who.can_read:
        raise LoginRequired
    return who


def require_admin(request: Request) -> Viewer:
    who = viewer(request)
    if not who.admin:
        raise LoginRequired
    return who


def login_redirect(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={quote(target)}", status_code=303)


async def form_with_csrf(request: Request) -> dict[str, Any]:
    """The posted form, after checking its CSRF token (403 when it is wrong)."""
    form = await request.form()
    who = viewer(request)
    token = form.get("csrf")
    if not auth.csrf_ok(web_state(request).csrf_secret, who.session_id,
                        token if isinstance(token, str) else None):
        raise HTTPException(403, "the form has expired or did not come from this site; "
                                 "reload the page and try again")
    return {k: form.getlist(k) if k == "ids" else form.get(k) for k in form}


def check_api_csrf(request: Request, who: Viewer) -> None:
    """Cookie-authenticated API writes need the page's CSRF token in a header."""
    if who.via_token:
        return
    if not auth.csrf_ok(web_state(request).csrf_secret, who.session_id,
                        request.headers.get(CSRF_HEADER)):
        raise HTTPException(403, f"missing or wrong {CSRF_HEADER} header")


def safe_next(value: object, default: str = "/") -> str:
    """Only same-site paths are followed after a form (no open redirect)."""
    if not isinstance(value, str) or not value.startswith("/") or value.startswith("//"):
        return default
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or "\\" in value:
        return default
    return value


def render(
    request: Request, template: str, context: dict[str, Any] | Callable[[], dict[str, Any]],
    *, status: int = 200,
    cache_key: tuple[str, ...] | None = None,
) -> Response:
    """Render a page (from the page cache when allowed) for this viewer.

    ``context`` may be a function, so that a cached page costs no queries at all.
    """
    st = web_state(request)
    who = viewer(request)
    body = st.pages.get(cache_key) if cache_key else None
    if body is None:
        generation = st.pages.generation
        ctx = {
            "request": request, "viewer": who, "mode": st.mode, "csrf": CSRF_PLACEHOLDER,
            "now": datetime.now(UTC), "path": request.url.path,
            **(context() if callable(context) else context),
        }
        body = st.env.get_template(template).render(ctx).encode()
        if cache_key and status == 200:
            st.pages.put(cache_key, body, generation)
    token = auth.csrf_token(st.csrf_secret, who.session_id)
    body = body.replace(CSRF_PLACEHOLDER.encode(), token.encode())
    response = Response(body, status_code=status, media_type="text/html; charset=utf-8",
                        headers={"Cache-Control": "no-cache"})
    if who.new_cookie:
        set_session_cookie(request, response, who.new_cookie)
    return response


def page_key(request: Request, name: str) -> tuple[str, ...]:
    """What a cached page depends on: the URL, the viewer's role and the access mode."""
    st = web_state(request)
    return (name, viewer(request).role, st.mode, request.url.path, request.url.query)
