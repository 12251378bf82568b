"""examples/sources/: every ready rule reads the page it was written against (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from readers_golden import Case, cases, check

EXAMPLES = Path(__file__).parent.parent / "examples" / "sources"
CASES = cases(EXAMPLES)


def test_the_examples_cover_the_kinds_the_product_is_for() -> None:
    modes = {(c.kind, c.config.get("mode", "html") if c.kind == "web_list"
              else ("embedded" if "json_key" in c.config else "json")) for c in CASES}
    assert modes >= {("web_list", "html"), ("web_list", "changelog"), ("json_list", "embedded"),
                     ("json_list", "json")}
    for spec in EXAMPLES.glob("*.source.json"):
        assert "may have changed" in json.loads(spec.read_text())["note"] or "documented" in (
            json.loads(spec.read_text())["note"])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_example(case: Case) -> None:
    check(case)
