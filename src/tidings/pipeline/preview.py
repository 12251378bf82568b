"""``tidings preview`` and the Preview button: a rule tried before it is saved.

A source that does not exist yet (kind, URL, config) is read once through the
same stages as a collection - config check, fetch, parse, filters, batch
limit, identity - and nothing is written: the person writing the rule sees
the entries it would store (title, URL, date, identity key), every warning,
or the one-line reason it found nothing. A ``markdown`` rule renders through
the paid service and is charged to its budget like any render.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tidings.model import Source, SourceKind
from tidings.net import decode_body
from tidings.pipeline.config import cost_class_of, validate_config
from tidings.pipeline.doctor import DoctorReport, doctor
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.extraction import PAGE_ACCEPT
from tidings.readers import proposed_kind
from tidings.readers.web.propose import propose_web_list

PREVIEW_ID = "preview"


async def preview(env: PipelineEnv, kind: SourceKind, url: str,
                  config: Mapping[str, Any]) -> DoctorReport:
    """What a source of ``kind`` at ``url`` with ``config`` would store; ConfigError
    (before anything is fetched) for a config that would be refused on save."""
    clean = validate_config(kind, config)
    source = Source(id=PREVIEW_ID, kind=kind, url=url, config=clean,
                    cost_class=cost_class_of(kind, clean))
    return await doctor(env, source, paid=env.paid, label="preview")


async def propose(env: PipelineEnv, url: str) -> tuple[dict[str, Any], DoctorReport] | None:
    """Selectors for the dominant repeated link block of the page at ``url`` and the
    preview of a source of the kind they are for (``proposed_kind``); None when the
    page has none."""
    resp = await env.fetcher.fetch(url, headers={"Accept": PAGE_ACCEPT})
    found = await env.offload(propose_web_list, decode_body(resp), resp.final_url)
    if found is None:
        return None
    return found.config, await preview(env, proposed_kind(), resp.final_url, found.config)
