"""Pipeline write functions called the way the writer calls them: inside a unit of work.

The product hands every write step to ``tidings.store.writer.Writer``; tests of
the pipeline's rules call the same step functions directly, each in a unit of
its own, so one call is one transaction exactly as in production.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

from tidings.pipeline import upsert as _upsert
from tidings.store.base import Storage, Unit

P = ParamSpec("P")
T = TypeVar("T")


def in_unit(store: Storage, step: Callable[Concatenate[Unit, P], T], *args: P.args,
            **kwargs: P.kwargs) -> T:
    with store.write() as unit:
        return step(unit, *args, **kwargs)


def upsert_items(store: Storage, *args: Any, **kwargs: Any) -> _upsert.UpsertOutcome:
    return in_unit(store, _upsert.upsert_items, *args, **kwargs)


def upsert_item(store: Storage, *args: Any, **kwargs: Any) -> _upsert.UpsertOutcome:
    return in_unit(store, _upsert.upsert_item, *args, **kwargs)


def apply_prepared(store: Storage, *args: Any, **kwargs: Any) -> _upsert.UpsertOutcome:
    return in_unit(store, _upsert.apply_prepared, *args, **kwargs)
