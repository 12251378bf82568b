""""Collect now" and "retry" from the web reader (issue 15): one source, or all.

One source is collected while the admin waits (a fetch is bounded by the
guard's timeouts) and the source page then shows the run at the top. All
sources are collected in the background, because a round over many sources
takes longer than a page should: the sources page says so and fills as runs
finish. Runs lease their sources as scheduled rounds do, so a source the
scheduler is collecting at that moment is not collected twice.
"""

from __future__ import annotations

import asyncio
import logging

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from tidings.app import Tidings, kinds
from tidings.errors import ConfigError
from tidings.model import RunOutcome
from tidings.web.context import form_with_csrf, require_admin, web_state
from tidings.web.state import WebState

router = APIRouter(include_in_schema=False)
log = logging.getLogger("tidings.web")
#: background rounds started from the sources page (kept so they are not collected early)
_ROUNDS: set[asyncio.Task[None]] = set()


@router.post("/sources/{source_id}/collect")
async def collect_one(request: Request, source_id: str) -> Response:
    require_admin(request)
    await form_with_csrf(request)
    st = web_state(request)
    source = st.tidings.sources.get(source_id)  # 404 for an unknown id
    if not kinds.is_fetched(source):
        raise ConfigError(f"source {source_id!r} is external: its items are pushed, "
                          "there is nothing to collect")
    report = await st.tidings.collection.round([source_id], extract=False)
    st.changed()
    counts = report.results.get(source_id)
    outcome = counts.outcome.value if counts else "muted" if source.muted_reason else "busy"
    return RedirectResponse(f"/sources/{source_id}?collected={outcome}", status_code=303)


@router.post("/collect")
async def collect_all(request: Request) -> Response:
    require_admin(request)
    await form_with_csrf(request)
    st = web_state(request)
    ids = [s.id for s in st.tidings.sources.all()
           if kinds.is_fetched(s) and not s.muted_reason]
    if ids:
        task = asyncio.create_task(_round(st, ids))
        _ROUNDS.add(task)
        task.add_done_callback(_ROUNDS.discard)
    return RedirectResponse(f"/sources?collecting={len(ids)}", status_code=303)


async def _round(st: WebState, ids: list[str]) -> None:
    tidings: Tidings = st.tidings
    try:
        report = await tidings.collection.round(ids, extract=False)
    except Exception:  # a background round must not vanish silently
        log.exception("collecting all sources from the web reader failed")
        return
    finally:
        st.changed()
    failed = [sid for sid, c in report.results.items() if c.outcome is RunOutcome.FAILED]
    log.info("collect now: %d of %d sources ok%s", report.ok, report.sources,
                f"; failed: {', '.join(failed)}" if failed else "")
