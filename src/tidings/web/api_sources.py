"""Adding sources and changing their config through the JSON API (R-SCHED-2).

The config is checked by the same per-kind schema as the CLI and the web form:
an unknown key is refused with a 400 naming it (and the closest known key), a
selector or expression that does not compile likewise, before anything is
saved. Nothing here fetches: a source is added with its kind (no autodiscovery)
and is read by the next round.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from tidings.app import SourceUpdate
from tidings.model import SourceKind
from tidings.web.api import SourceOut, Writer, source_out
from tidings.web.context import web_state

router = APIRouter(prefix="/api/v1", tags=["api"],
                   responses={401: {"description": "not logged in / no valid token"}})


class NewSource(BaseModel):
    kind: SourceKind = Field(description="the source's kind, one of those installed (an "
                             "unknown one is refused with the known ones named)")
    url: str = Field(min_length=1, max_length=2000, pattern=r"^https?://")
    title: str = Field(default="", max_length=300)
    config: dict[str, Any] = Field(default_factory=dict)


class ConfigChange(BaseModel):
    config: dict[str, Any]


@router.post("/sources", response_model=SourceOut, status_code=201,
             responses={400: {"description": "the config is refused (the key is named)"},
                        403: {"description": "CSRF header missing"}})
async def add_source(request: Request, who: Writer, new: NewSource) -> Any:
    """Add a source of a given kind with its config, checked before it is saved."""
    st = web_state(request)
    source = await st.tidings.sources.create(new.url, kind=new.kind, title=new.title,
                                             config=new.config)
    st.changed()
    return source_out(st.tidings, source)


@router.put("/sources/{source_id}/config", response_model=SourceOut,
            responses={400: {"description": "the config is refused (the key is named)"},
                       403: {"description": "CSRF header missing"},
                       404: {"description": "no such source"}})
async def set_config(request: Request, who: Writer, source_id: str,
                     change: ConfigChange) -> Any:
    """Replace a source's config, checked for its kind before it is saved."""
    st = web_state(request)
    source = await st.tidings.sources.update(source_id, SourceUpdate(config=change.config))
    st.changed()
    return source_out(st.tidings, source)
