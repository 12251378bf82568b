"""Story pages (R-DEDUP-12): Trending by heat, and why an item is in its story.

In a module of its own (and its own templates) so the list and article pages
only gain a line each.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from tidings.errors import NotFoundError
from tidings.web.context import render, require_reader, web_state
from tidings.web.pages_read import visible_filter
from tidings.web.sidebar import TRENDING, nav_context
from tidings.web.stories import StoryView, languages, shown

router = APIRouter(include_in_schema=False)


@router.get("/trending")
async def trending(request: Request) -> Response:
    require_reader(request)
    st = web_state(request)
    visible = visible_filter(request)

    def context() -> dict[str, Any]:
        views = []
        for story in st.tidings.stories.trending(TRENDING):
            rows = [r for r in story.rows if shown(visible, r)]
            if len({r.source_id for r in rows}) > 1:
                views.append(StoryView(story.cluster_id, story.heat, rows[0], rows[1:],
                                       languages(rows)))
        return {"view": "trending", "title": "Trending", "stories": views,
                **nav_context(request)}

    return render(request, "trending.html", context)


@router.get("/item/{item_id}/story")
async def why(request: Request, item_id: int) -> Response:
    """Why the item is in its story: similarity and shared shingles with each other item."""
    require_reader(request)
    st = web_state(request)
    visible = visible_filter(request)
    item = st.tidings.items.get(item_id)
    if not visible(item):
        raise NotFoundError(f"no item {item_id}")
    explanation = st.tidings.stories.explain(item_id)
    peers = [p for p in explanation.peers if shown(visible, p)]
    return render(request, "story_why.html", {"item": item, "why": explanation, "peers": peers,
                                              "title": f"Why: {item.title or item_id}"})
