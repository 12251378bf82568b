"""The storage backends the contract tests run against, and helpers for those tests.

Every ``tests/test_store_*.py`` test that takes the ``storage`` fixture runs once per
backend listed in ``BACKENDS``. A PostgreSQL backend is added with one line here
(a factory taking the test's tmp_path and returning an open Storage).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tidings.model import BodyState, Source, SourceKind
from tidings.store.base import ItemFields, NewItem, Storage
from tidings.store.sqlite import SqliteStorage


def _sqlite(tmp_path: Path) -> Storage:
    return SqliteStorage(tmp_path / "contract" / "tidings.sqlite3")


def _postgres(tmp_path: Path) -> Storage:
    import pgserver
    from tidings.store.postgres import PostgresStorage

    return PostgresStorage(pgserver.schema_url(), pool_size=4)


BACKENDS: dict[str, Callable[[Path], Storage]] = {
    "sqlite": _sqlite,
    "postgresql": _postgres,
}

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def source(sid: str = "feed", **kw: object) -> Source:
    values: dict[str, object] = {"kind": SourceKind("rss"), "url": f"https://{sid}.example/feed",
                                 "title": f"Title of {sid}", "created_at": T0, **kw}
    return Source(id=sid, **values)  # type: ignore[arg-type]


def fields(title: str = "Hello", body: str | None = "<p>Body text</p>", **kw: object
           ) -> ItemFields:
    values: dict[str, object] = {
        "url": f"https://example.com/{abs(hash(title)) % 10**8}", "summary": "",
        "body_state": BodyState.OK, "published_at": T0, "content_hash": f"hash:{title}:{body}",
        "title_fp": f"fp:{title.lower()}",
    }
    values.update(kw)
    return ItemFields(title=title, body=body, **values)  # type: ignore[arg-type]


def new(key: str, source_id: str = "feed", minutes: float = 0, backfill: bool = False,
        **kw: object) -> NewItem:
    f = fields(**kw)  # type: ignore[arg-type]
    return NewItem(key=key, source_id=source_id, fields=f, discovered_at=at(minutes),
                   backfill=backfill)
