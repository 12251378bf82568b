"""Schemathesis over the push-ingest and JSON API operations (R-INGEST, R-API-1): generated
valid and invalid requests, bounded, and never a 5xx; a refused ingest stores nothing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import hypothesis
import hypothesis.errors
import pytest
import schemathesis

from test_web_support import (
    Spec,
    add_items,
    add_source,
    new_token,
    open_archive,
    run,
    serve_web,
    store_password,
)
from tidings.app import ItemQuery
from tidings.errors import ConfigError
from tidings.settings import load_settings
from tidings.web import create_app


def test_ingest_and_json_api_never_answer_5xx(tmp_path: Path) -> None:
    settings = replace(load_settings(tmp_path / "data", env={}), ingest_per_minute=100_000)
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha")
    add_items(tid, [Spec(f"Fuzz {i}") for i in range(5)])
    store_password(tid, "fuzzing password")
    headers = {"Authorization": f"Bearer {new_token(tid, 'fuzz')}"}
    app = create_app(tid, settings, page_ttl=0)
    schema = schemathesis.openapi.from_asgi("/api/openapi.json", app)
    calls = {"ingest": 0, "other": 0}

    def count() -> int:
        return len(tid.items.query(ItemQuery(limit=100_000)))

    for found in schema.get_all_operations():
        operation = found.ok()
        ingest = operation.path == "/api/ingest/items"
        examples = 60 if ingest else 8
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):

            @hypothesis.given(case=operation.as_strategy(generation_mode=mode))
            @hypothesis.settings(max_examples=examples, deadline=None, derandomize=True,
                                 database=None, suppress_health_check=list(hypothesis.HealthCheck))
            def check(case: Any) -> None:
                ingest = case.operation.path == "/api/ingest/items"
                before = count() if ingest else 0
                response = case.call(headers=headers)
                calls["ingest" if ingest else "other"] += 1
                assert response.status_code < 500, (case.method, case.formatted_path,
                                                    case.body, response.text[:300])
                if ingest and response.status_code >= 400:
                    assert count() == before, response.text[:300]  # nothing half-applied
                if ingest and response.status_code == 200:
                    body = response.json()
                    assert body["stored"] + body["unchanged"] + body["skipped"] == len(
                        case.body["items"])

            try:
                check()
            except hypothesis.errors.Unsatisfiable:
                assert mode is schemathesis.GenerationMode.NEGATIVE
    tid.close()
    assert calls["ingest"] > 60 and calls["other"] > 40


def test_an_item_id_past_64_bits_is_a_4xx_not_500(tmp_path: Path) -> None:
    """Found by the run above: a huge id overflowed SQLite's integer (a 500); ids are
    bounded at the edge now (422, issue 16)."""
    settings = load_settings(tmp_path / "data", env={})
    tid = open_archive(settings)
    store_password(tid, "fuzzing password")
    token = new_token(tid, "fuzz")
    server = serve_web(tid, settings)
    try:
        for method in ("GET", "PATCH"):
            answer = httpx.request(method, f"{server.url}/api/v1/items/{2**63}", json={},
                                   headers={"Authorization": f"Bearer {token}"})
            assert answer.status_code == 422 and "detail" in answer.json()
    finally:
        server.stop()
        tid.close()


def test_control_characters_in_a_search_are_refused(tmp_path: Path) -> None:
    """Found by the run above: a NUL in the query ended FTS5's string early (a 503); a
    control character is refused in one line before the database sees it (issue 16)."""
    tid = open_archive(load_settings(tmp_path / "data", env={}))
    add_source(tid, "alpha", "Alpha")
    add_items(tid, [Spec("Needle in hay")])
    run(tid.search.index_pending)
    assert [h.item.title for h in tid.search.find("needle")] == ["Needle in hay"]
    for query in ("needle\x00", "\x00\x1f'a"):
        with pytest.raises(ConfigError, match="control characters are not allowed"):
            tid.search.find(query)
    tid.close()
