"""Navigation by folder and source (issue 32): folder lists, the sidebar's counts as
JSON (``GET /api/v1/counts``, the same as the page shows: ``web.sidebar``), and
"mark this source or folder read" with an undo, as forms and as the API.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field, model_validator
from starlette.responses import RedirectResponse, Response

from tidings.app import FolderEntry, ItemQuery, SourceEntry
from tidings.errors import ConfigError, NotFoundError
from tidings.model import Source, Visibility
from tidings.web.api import Reader, Writer
from tidings.web.context import (
    form_with_csrf,
    require_admin,
    require_reader,
    safe_next,
    web_state,
)
from tidings.web.pages_read import list_page
from tidings.web.sidebar import sidebar

router = APIRouter(include_in_schema=False)
api_router = APIRouter(prefix="/api/v1", tags=["api"],
                       responses={401: {"description": "not logged in / no valid token"}})
MAX_NAME = 200


def _scope(request: Request, source: str | None, folder: str | None) -> tuple[list[Source], str]:
    """The sources a mark covers and how to name them (NotFoundError if unknown)."""
    sources = web_state(request).sources()
    if source is not None:
        found = sources.get(source)
        if found is None:
            raise NotFoundError(f"no source {source!r}")
        return [found], found.title or found.id
    if folder is None:
        raise ConfigError("name a source or a folder to mark read")
    if folder not in web_state(request).tidings.folders.names():
        raise NotFoundError(f"no folder {folder!r}")
    return [s for s in sources.values() if s.folder == folder], folder


# ------------------------------------------------------------------------ pages


@router.get("/folder/{name:path}")
async def folder_items(request: Request, name: str) -> Response:
    """The items of a folder's sources, newest first."""
    who = require_reader(request)  # first: a visitor learns no folder's name by its 404
    if name not in web_state(request).tidings.folders.names():
        raise NotFoundError(f"no folder {name!r}")
    ids = tuple(sorted(s.id for s in web_state(request).sources().values()
                       if s.folder == name
                       and (who.admin or s.visibility is Visibility.EDITORIAL)))
    return list_page(request, "folder", name, ItemQuery(source_ids=ids), quota=None,
                     extra={"folder": name, "folder_sources": len(ids)})


@router.post("/nav/mark-read")
async def mark_read_form(request: Request) -> Response:
    """The list page's "Mark source/folder as read" button (no JavaScript needed)."""
    require_admin(request)
    form = await form_with_csrf(request)
    source, folder = _text(form.get("source")), _text(form.get("folder"))
    scope, label = _scope(request, source, folder)
    mark = await web_state(request).tidings.navigation.mark_read(scope, label)
    web_state(request).changed()
    back = safe_next(form.get("next"), f"/folder/{quote(folder, safe='')}" if folder
                     else f"/source/{quote(source or '', safe='')}")
    return RedirectResponse(_with_param(back, "marked", mark.token), status_code=303)


@router.post("/nav/undo")
async def undo_form(request: Request) -> Response:
    require_admin(request)
    form = await form_with_csrf(request)
    restored = await web_state(request).tidings.navigation.undo(_text(form.get("undo")) or "")
    web_state(request).changed()
    back = safe_next(form.get("next"))
    return RedirectResponse(_with_param(back, "undone", str(restored)), status_code=303)


def _text(value: object) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > MAX_NAME:
        raise ConfigError(f"at most {MAX_NAME} characters")
    return value


def _with_param(path: str, name: str, value: str) -> str:
    base = path.split("?", 1)[0]
    return f"{base}?{name}={quote(value, safe='')}"


# -------------------------------------------------------------------------- API


class SourceCountOut(BaseModel):
    id: str
    title: str
    unread: int
    today: int = Field(description="unread items of Today (last 24 h, no backfill)")
    starred: int


class FolderCountOut(BaseModel):
    name: str
    unread: int
    sources: list[SourceCountOut]


class CountsOut(BaseModel):
    today: int = Field(description="unread items of Today (last 24 h, no backfill)")
    all: int = Field(description="unread items")
    starred: int
    trending: int = Field(description="stories on the Trending page")
    folders: list[FolderCountOut]
    sources: list[SourceCountOut] = Field(description="sources in no folder")


class MarkScope(BaseModel):
    source: Annotated[str | None, Field(max_length=MAX_NAME)] = None
    folder: Annotated[str | None, Field(max_length=MAX_NAME)] = None

    @model_validator(mode="after")
    def one_of(self) -> MarkScope:
        if (self.source is None) == (self.folder is None):
            raise ValueError("give either source or folder")
        return self


class MarkedOut(BaseModel):
    marked: int = Field(description="items marked read")
    undo: str = Field(description="pass to POST /api/v1/mark-read/undo (30 minutes)")
    label: str


class UndoIn(BaseModel):
    undo: Annotated[str, Field(min_length=1, max_length=40)]


class UndoneOut(BaseModel):
    restored: int = Field(description="items marked unread again")


def _source_out(s: SourceEntry) -> SourceCountOut:
    return SourceCountOut(id=s.id, title=s.title, unread=s.unread, today=s.today,
                          starred=s.starred)


def _folder_out(f: FolderEntry) -> FolderCountOut:
    return FolderCountOut(name=f.name, unread=f.unread,
                          sources=[_source_out(s) for s in f.sources])


@api_router.get("/counts", response_model=CountsOut)
async def counts(request: Request, who: Reader) -> Any:
    """Unread counts per folder and source, and of Today, All, Starred and Trending:
    what the reader's sidebar shows."""
    nav = sidebar(request)
    return CountsOut(today=nav.today, all=nav.all, starred=nav.starred, trending=nav.trending,
                     folders=[_folder_out(f) for f in nav.folders],
                     sources=[_source_out(s) for s in nav.unfiled])


@api_router.post("/mark-read", response_model=MarkedOut,
                 responses={403: {"description": "CSRF header missing"},
                            404: {"description": "no such source or folder"}})
async def mark_read(request: Request, who: Writer, scope: MarkScope) -> Any:
    """Mark every unread item of a source or a folder read; ``undo`` takes it back."""
    sources, label = _scope(request, scope.source, scope.folder)
    mark = await web_state(request).tidings.navigation.mark_read(sources, label)
    web_state(request).changed()
    return MarkedOut(marked=len(mark.item_ids), undo=mark.token, label=label)


@api_router.post("/mark-read/undo", response_model=UndoneOut,
                 responses={404: {"description": "nothing to undo (expired or undone)"}})
async def undo(request: Request, who: Writer, body: UndoIn) -> Any:
    """Mark unread again exactly what one mark-read marked read."""
    restored = await web_state(request).tidings.navigation.undo(body.undo)
    web_state(request).changed()
    return UndoneOut(restored=restored)
