"""The Preview button of the add and edit source pages (issue 17).

The form's kind, URL and config are read once with nothing stored, and the
page comes back with the form as typed and what the rules found: the entries
that would be stored (title, URL, date, identity key), the warnings, or the
one-line reason the rules found nothing. A config that would be refused on
save is refused here with the same message.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from tidings.app import kinds
from tidings.errors import TidingsError
from tidings.model import SourceKind
from tidings.web.context import form_with_csrf, render, require_admin, web_state
from tidings.web.pages_sources import _parse_config, _source_context, editable_kinds

router = APIRouter(include_in_schema=False)


async def _preview(request: Request, kind: SourceKind, url: str,
                   raw_config: object) -> tuple[Any, str]:
    """(the report, "") or (None, the reason nothing was read)."""
    if not url.lower().startswith(("http://", "https://")):
        return None, "url: must start with http:// or https://"
    try:
        config = _parse_config(raw_config)
        return await web_state(request).tidings.probes.preview(kind, url, config), ""
    except TidingsError as exc:
        return None, str(exc)


@router.post("/add/preview")
async def add_preview(request: Request) -> Response:
    require_admin(request)
    form = await form_with_csrf(request)
    url = str(form.get("url") or "").strip()
    kind = SourceKind(str(form.get("kind") or kinds.page_kind()))
    report, error = await _preview(request, kind, url, form.get("config"))
    ctx = {"title": "Add a source", "url": url, "candidates": [], "kinds": editable_kinds(),
           "error": error, "preview": report, "form_kind": kind,
           "form_title": str(form.get("title") or ""),
           "form_config": str(form.get("config") or "{}")}
    return render(request, "add.html", ctx, status=400 if error else 200)


@router.post("/sources/{source_id}/preview")
async def edit_preview(request: Request, source_id: str) -> Response:
    require_admin(request)
    form = await form_with_csrf(request)
    source = web_state(request).tidings.sources.get(source_id)
    url = str(form.get("url") or "").strip()
    report, error = await _preview(request, source.kind, url, form.get("config"))
    ctx = _source_context(request, source)
    ctx["form"] = {k: str(form.get(k) or "") for k in ctx["form"]}
    ctx["error"] = error
    ctx["preview"] = report
    return render(request, "source.html", ctx, status=400 if error else 200)
