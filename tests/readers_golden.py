"""Golden cases of the page and JSON readers: a saved response next to the source that
reads it (``<case>.source.json``: url, config) and the entries expected
(``<case>.expected.json``). Shared by the golden tests and the examples' tests.

Regenerate after a deliberate change with
    TIDINGS_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/test_readers_golden.py
and review the diff of the .expected.json files before committing them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tidings.model import ItemData, RawResponse, Source, SourceKind
from tidings.pipeline.config import validate_config
from tidings.readers import get_reader
from tidings.readers.base import ReadResult

REGEN = os.environ.get("TIDINGS_REGEN_GOLDEN") == "1"
FETCHED = datetime(2026, 9, 26, 12, 0, tzinfo=UTC)
_TYPES = {".html": "text/html; charset=utf-8", ".json": "application/json",
          ".md": "text/plain; charset=utf-8"}


@dataclass(frozen=True)
class Case:
    name: str
    kind: SourceKind
    page: Path
    url: str
    config: dict[str, Any]

    @property
    def expected(self) -> Path:
        return self.page.with_name(self.name + ".expected.json")

    def source(self) -> Source:
        return Source(id=self.name.replace("_", "-"), kind=self.kind, url=self.url,
                      config=validate_config(self.kind, self.config))

    def raw(self) -> RawResponse:
        return RawResponse(url=self.url, final_url=self.url, fetched_at=FETCHED, status=200,
                           headers={"Content-Type": _TYPES[self.page.suffix]},
                           body=self.page.read_bytes())


def cases(folder: Path, kind: SourceKind | None = None) -> list[Case]:
    """Every ``<case>.source.json`` in ``folder`` with its page (kind from the file,
    else ``kind``)."""
    out = []
    for spec in sorted(folder.glob("*.source.json")):
        name = spec.name.removesuffix(".source.json")
        data = json.loads(spec.read_text(encoding="utf-8"))
        page = next(p for p in folder.iterdir() if p.name.startswith(name + ".")
                    and p.suffix in _TYPES and p.name.count(".") == 1)
        out.append(Case(name, SourceKind(data.get("kind") or kind), page, data["url"],
                        data["config"]))
    return out


def as_json(result: ReadResult) -> dict[str, Any]:
    return {"warnings": list(result.warnings), "items": [_item(i) for i in result.items]}


def _item(item: ItemData) -> dict[str, Any]:
    out: dict[str, Any] = {"title": item.title, "url": item.url}
    for name in ("guid", "key", "summary", "author", "published_raw"):
        if getattr(item, name):
            out[name] = getattr(item, name)
    out["published_at"] = item.published_at.isoformat() if item.published_at else None
    out["body_state"] = item.body_state.value
    if item.body:
        out["body"] = item.body
    return out


def parse_case(case: Case) -> ReadResult:
    return get_reader(case.kind).parse_raw(case.source(), case.raw())


def check(case: Case) -> None:
    got = as_json(parse_case(case))
    if REGEN:
        case.expected.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n",
                                 encoding="utf-8")
    assert case.expected.exists(), f"{case.expected.name} missing: run with TIDINGS_REGEN_GOLDEN=1"
    assert got == json.loads(case.expected.read_text(encoding="utf-8"))
