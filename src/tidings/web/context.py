"""Per-request context: who is asking, and how pages are answered.

Every browser gets a signed session cookie on its first page, even before
logging in: the CSRF token of its forms is derived from it (R-API-6), which is
what keeps another site from posting "mark all as read" through the user's
browser, even in the password-less loopback mode.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import HTTPException, Request
from starlette.responses import RedirectResponse, Response

from tidings.web import auth
from tidings.web.state import CSRF_PLACEHOLDER, WebState

CSRF_HEADER = "x-csrf-token"


@dataclass(frozen=True, slots=True)
class Viewer:
    admin: bool
    can_read: bool
    session: auth.Session
    new_cookie: str | None
    via_token: bool

    @property
    def role(self) -> str:
        return "admin" if self.admin else ("reader" if self.can_read else "anon")


def web_state(request: Request) -> WebState:
    state: WebState = request.app.state.web
    return state


def viewer(request: Request) -> Viewer:
    cached: Viewer | None = getattr(request.state, "viewer", None)
    if cached is not None:
        return cached
    st = web_state(request)
    state = st.auth
    header = request.headers.get("authorization", "")
    via_token = False
    if header[:7].lower() == "bearer ":
        if not auth.token_valid(state, header[7:].strip()):
            raise HTTPException(401, "invalid API token", {"WWW-Authenticate": "Bearer"})
        via_token = True
    session = auth.decode_session(state, request.cookies.get(auth.SESSION_COOKIE))
    new_cookie = None
    if session is None:
        session = auth.new_session(admin=False)
        new_cookie = auth.encode_session(state, session)
    mode = st.mode
    admin = via_token or mode == "open" or session.admin
    result = Viewer(admin=admin, can_read=admin or mode == "public", session=session,
                    new_cookie=new_cookie, via_token=via_token)
    request.state.viewer = result
    return result


def set_session_cookie(request: Request, response: Response, value: str) -> None:
    response.set_cookie(
        auth.SESSION_COOKIE, value, max_age=auth.SESSION_DAYS * 86400, httponly=True,
        samesite="lax", secure=request.url.scheme == "https", path="/",
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
    if not auth.csrf_ok(web_state(request).auth, who.session, token if isinstance(token, str)
                        else None):
        raise HTTPException(403, "the form has expired or did not come from this site; "
                                 "reload the page and try again")
    return {k: form.getlist(k) if k == "ids" else form.get(k) for k in form}


def check_api_csrf(request: Request, who: Viewer) -> None:
    """Cookie-authenticated API writes need the page's CSRF token in a header."""
    if who.via_token:
        return
    if not auth.csrf_ok(web_state(request).auth, who.session,
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
    token = auth.csrf_token(st.auth, who.session)
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
