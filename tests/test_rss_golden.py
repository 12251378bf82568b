"""Golden files: tests/data/feeds/<case>.<ext> next to <case>.expected.json.

Regenerate after a deliberate change with
    TIDINGS_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/test_rss_golden.py
and review the diff of the .expected.json files before committing them.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tidings.readers.rss import ParsedFeed, parse_feed

DATA = Path(__file__).parent / "data" / "feeds"
CASES = sorted(p for p in DATA.iterdir() if p.is_file() and ".expected." not in p.name)
REGEN = os.environ.get("TIDINGS_REGEN_GOLDEN") == "1"


def feed_url(path: Path) -> str:
    return f"https://feeds.example.org/{path.name}"


def as_json(feed: ParsedFeed) -> dict[str, Any]:
    def value(v: Any) -> Any:
        if isinstance(v, datetime):
            return v.isoformat()
        if isinstance(v, tuple):
            return [value(x) for x in v]
        if isinstance(v, dict):
            return {k: value(x) for k, x in v.items()}
        if hasattr(v, "value"):  # enums
            return v.value
        return v

    items = []
    for item in feed.items:
        items.append({name: value(getattr(item, name)) for name in item.__slots__})
    return {
        "format": feed.format,
        "title": feed.title,
        "site_url": feed.site_url,
        "ttl": feed.ttl,
        "hub": feed.hub,
        "language": feed.language,
        "warnings": list(feed.warnings),
        "items": items,
    }


def expected_path(case: Path) -> Path:
    return case.with_name(case.name.rsplit(".", 1)[0] + ".expected.json")


def test_every_format_has_a_golden_case() -> None:
    names = {c.name.rsplit(".", 1)[0] for c in CASES}
    assert {"rss20", "rss091", "rss10", "rss090", "atom10", "atom03", "jsonfeed10",
            "jsonfeed11"} <= names
    assert {n for n in names if n.startswith("malformed_")}, "malformed cases are missing"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden(case: Path) -> None:
    got = as_json(parse_feed(case.read_bytes(), url=feed_url(case)))
    target = expected_path(case)
    if REGEN:
        target.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert target.exists(), f"{target.name} missing: run with TIDINGS_REGEN_GOLDEN=1"
    assert got == json.loads(target.read_text(encoding="utf-8"))
