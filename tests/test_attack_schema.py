"""Schemathesis over the whole OpenAPI schema (issue 16): 0 5xx, 0 schema mismatches.

Every operation the schema lists (new ones are picked up by themselves) is
driven with valid and invalid input, bounded and reproducible, as a token
holder of a private reader and as an anonymous visitor of a public one (the
campaign's 500s were reachable anonymously). Checks: no 5xx, and every answer
that the schema describes matches it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import hypothesis
import hypothesis.errors
import pytest
import schemathesis
from schemathesis.checks import not_a_server_error, response_schema_conformance

from test_web_support import Spec, add_items, add_source, new_token, open_archive, store_password
from tidings.settings import load_settings
from tidings.web import create_app

EXAMPLES = 8
MODES = (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE)


@pytest.mark.parametrize("visitor", ["token", "anonymous-public"])
def test_the_api_never_answers_5xx_nor_off_schema(tmp_path: Path, visitor: str) -> None:
    settings = load_settings(tmp_path / "data", env={})
    if visitor == "anonymous-public":
        settings = replace(settings, public_reading=True)
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha")
    add_items(tid, [Spec(f"Item {i} 中文 <b>", age=timedelta(minutes=i)) for i in range(20)])
    store_password(tid, "schemathesis password")
    headers = ({"Authorization": f"Bearer {new_token(tid, 'fuzz')}"} if visitor == "token"
               else {})
    schema = schemathesis.openapi.from_asgi("/api/openapi.json",
                                            create_app(tid, settings, page_ttl=0))
    calls: dict[str, int] = {}
    failures: list[str] = []
    for found in schema.get_all_operations():
        operation = found.ok()
        for mode in MODES:

            @hypothesis.given(case=operation.as_strategy(generation_mode=mode))
            @hypothesis.settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                                 database=None,
                                 suppress_health_check=list(hypothesis.HealthCheck))
            def run(case: Any) -> None:
                response = case.call(headers=headers)
                label = f"{case.method} {case.path}"
                calls[label] = calls.get(label, 0) + 1
                try:
                    case.validate_response(response, checks=[not_a_server_error,
                                                             response_schema_conformance])
                except AssertionError as exc:  # schemathesis' Failure and FailureGroup
                    failures.append(f"{case.method} {case.formatted_path} {case.query}: "
                                    f"{response.status_code} {str(exc)[:300]}")

            try:
                run()
            except hypothesis.errors.Unsatisfiable:
                assert mode is schemathesis.GenerationMode.NEGATIVE  # nothing to make invalid
    tid.close()
    assert failures == [], "\n".join(failures[:10])
    assert len(calls) >= 7 and min(calls.values()) >= 1, calls
    print(f"schemathesis ({visitor}): {sum(calls.values())} calls over {len(calls)} "
          "operations, 0 5xx, 0 schema mismatches")
