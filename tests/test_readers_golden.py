"""Golden pages of every shape the web_list and json_list readers are for (R-WEB, R-JSON)."""

from __future__ import annotations

from pathlib import Path

import pytest

from readers_golden import Case, cases, check
from tidings.model import SourceKind

DATA = Path(__file__).parent / "data"
CASES = cases(DATA / "web_list", SourceKind("web_list")) + cases(DATA / "json_list",
                                                               SourceKind("json_list"))


def test_every_shape_has_a_golden_case() -> None:
    assert {c.name for c in CASES} >= {
        "company_news_cards", "blog_index_tags", "docusaurus_changelog", "nextjs_next_data",
        "nextjs_flight", "initial_state", "github_releases", "hn_algolia", "rendered_news"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_golden(case: Case) -> None:
    check(case)
