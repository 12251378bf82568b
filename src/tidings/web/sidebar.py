"""The reader's sidebar as a page and the API get it (issue 32): folders, sources and
unread counts, and the counts of Today, All, Starred and Trending.

Both come from one memo per role (``WebState.sidebar``), dropped whenever this
process writes, so a page and ``/api/v1/counts`` asked one after the other agree.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import Request
from markupsafe import Markup, escape

from tidings.app import Sidebar
from tidings.model import Visibility
from tidings.web.context import viewer, web_state

#: Today: the last 24 hours (without backfilled history)
TODAY_HOURS = 24
#: stories on the Trending page at most
TRENDING = 30
#: the views the sidebar lists above the folders
_VIEWS = frozenset({"today", "all", "starred", "trending"})


def sidebar(request: Request) -> Sidebar:
    """The sidebar of this viewer's role (a visitor's without isolated sources)."""
    admin = viewer(request).admin
    return web_state(request).sidebar(admin, lambda: _build(request, admin))


def _build(request: Request, admin: bool) -> Sidebar:
    st = web_state(request)
    sources = st.sources()

    def visible(source_id: str) -> bool:
        s = sources.get(source_id)
        return admin or s is None or s.visibility is Visibility.EDITORIAL

    # the Trending page's own rule: stories told by two visible sources or more
    trending = sum(1 for story in st.tidings.stories.trending(TRENDING)
                   if len({r.source_id for r in story.rows if visible(r.source_id)}) > 1)
    since = datetime.now(UTC) - timedelta(hours=TODAY_HOURS)
    return st.tidings.navigation.sidebar(sources.values(), admin=admin, since=since,
                                         trending=trending)


def nav_context(request: Request) -> dict[str, Any]:
    """What a page with the sidebar adds to its context: the sidebar, and the notice
    of a mark just made (``?marked=TOKEN``) or undone (``?undone=N``)."""
    marked = request.query_params.get("marked", "")[:40]
    undone = request.query_params.get("undone", "")
    nav = sidebar(request)
    return {"nav": nav, "nav_html": _marker(request, nav),
            "marked": web_state(request).tidings.navigation.marked(marked) if marked else None,
            "undone": int(undone) if undone.isdigit() and len(undone) < 10 else None}


def _marker(request: Request, nav: Sidebar) -> Callable[[Any, Any, Any], Markup]:
    """The sidebar's HTML with the page's own view marked current. The HTML is rendered
    once per role while its counts hold (at 200 sources it is half a list page, and
    rendering it for every page cost the list a third of its speed); marking the
    current view is one replacement in it."""
    st, admin = web_state(request), viewer(request).admin
    cached = st.sidebar_html.get(admin)
    if cached is None or cached[0] is not nav:
        cached = (nav, st.env.get_template("_sidebar.html").render(nav=nav))
        st.sidebar_html[admin] = cached
    html = cached[1]

    def marked(view: Any, folder: Any, source_id: Any) -> Markup:
        if view == "source" and source_id:
            attr = f'data-source="{escape(source_id)}"'
        elif view == "folder" and folder:
            attr = f'data-folder-link="{escape(folder)}"'
        elif view in _VIEWS:
            attr = f'data-view="{view}"'
        else:
            return Markup(html)  # noqa: S704 - rendered by the autoescaping template
        return Markup(html.replace(attr, attr + ' aria-current="page"', 1))  # noqa: S704

    return marked
