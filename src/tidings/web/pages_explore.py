"""The Explore page (R-DISC-3 in the web reader): crawl from a few sites, pick the finds.

A crawl started here runs as a task of the server's event loop; its progress
and finds are read from storage, so the page only reloads itself while the
crawl runs (no script needed). A crawl left unfinished (the server stopped)
can be resumed from the page. Admins only: a crawl sends requests on the
server's behalf.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from tidings.app import Crawl, CrawlLimits, Tidings
from tidings.errors import ConfigError, NotFoundError, TidingsError
from tidings.web.context import form_with_csrf, render, require_admin, web_state

router = APIRouter(include_in_schema=False)
MAX_SEEDS = 20
DEPTHS = (1, 2, 3)
_SITE_LIMIT = 500
_PAGE_LIMIT = 5000


def _tasks(request: Request) -> dict[int, asyncio.Task[Any]]:
    """The crawls running in this server, by id (kept so the loop does not drop them)."""
    tasks: dict[int, asyncio.Task[Any]] | None = getattr(request.app.state, "crawls", None)
    if tasks is None:
        tasks = request.app.state.crawls = {}
    return tasks


def _launch(request: Request, tidings: Tidings, crawl_id: int) -> None:
    tasks = _tasks(request)
    if crawl_id in tasks and not tasks[crawl_id].done():
        return
    task = asyncio.get_running_loop().create_task(tidings.crawls.run(crawl_id))
    tasks[crawl_id] = task
    task.add_done_callback(lambda t: None if t.cancelled() else t.exception())


def _context(request: Request, crawl: Crawl | None, message: str, error: str,
             seeds: str = "") -> dict[str, Any]:
    tid = web_state(request).tidings
    ctx: dict[str, Any] = {"title": "Explore", "crawl": crawl, "message": message,
                           "error": error, "seeds": seeds, "depths": DEPTHS,
                           "recent": tid.crawls.recent(10)}
    if crawl is not None:
        task = _tasks(request).get(crawl.id)
        ctx.update(counts=tid.crawls.counts(crawl.id), finds=tid.crawls.findings(crawl.id),
                   troubles=tid.crawls.troubles(crawl.id, 50),
                   running=task is not None and not task.done())
    return ctx


@router.get("/explore")
async def explore(request: Request, crawl: int | None = None, message: str = "") -> Response:
    require_admin(request)
    crawls = web_state(request).tidings.crawls
    chosen: Crawl | None = None
    if crawl is not None:
        chosen = crawls.get(crawl)
    elif crawls.recent(1):
        chosen = crawls.get()
    return render(request, "explore.html", _context(request, chosen, message[:200], ""))


@router.post("/explore")
async def start(request: Request) -> Response:
    require_admin(request)
    form = await form_with_csrf(request)
    tid = web_state(request).tidings
    text = str(form.get("seeds") or "")
    seeds = [line.strip() for line in text.replace(",", "\n").splitlines() if line.strip()]
    try:
        if len(seeds) > MAX_SEEDS:
            raise ConfigError(f"at most {MAX_SEEDS} sites to start from")
        depth = int(str(form.get("depth") or "2"))
        if depth not in DEPTHS:
            raise ConfigError("depth: 1, 2 or 3")
        crawl_id = await tid.crawls.start(seeds, CrawlLimits(depth, _SITE_LIMIT, _PAGE_LIMIT))
    except (TidingsError, ValueError) as exc:
        return render(request, "explore.html", _context(request, None, "", str(exc), text),
                      status=400)
    _launch(request, tid, crawl_id)
    return RedirectResponse(f"/explore?crawl={crawl_id}", status_code=303)


@router.post("/explore/{crawl_id}/resume")
async def resume(request: Request, crawl_id: int) -> Response:
    require_admin(request)
    await form_with_csrf(request)
    tid = web_state(request).tidings
    tid.crawls.get(crawl_id)
    _launch(request, tid, crawl_id)
    return RedirectResponse(f"/explore?crawl={crawl_id}", status_code=303)


@router.post("/explore/{crawl_id}/add")
async def add(request: Request, crawl_id: int) -> Response:
    require_admin(request)
    form = await form_with_csrf(request)
    st = web_state(request)
    try:
        ids = [int(v) for v in form.get("ids") or []]  # the ticked finds
    except (TypeError, ValueError):
        raise NotFoundError("no such find") from None
    if not ids:
        return RedirectResponse(f"/explore?crawl={crawl_id}&message=Tick+the+feeds+to+add",
                                status_code=303)
    added, problems = await st.tidings.crawls.add(crawl_id, ids)
    st.changed()
    note = f"Added {len(added)} sources" + (f"; {len(problems)} not added" if problems else "")
    return RedirectResponse(f"/explore?crawl={crawl_id}&message={note.replace(' ', '+')}",
                            status_code=303)
