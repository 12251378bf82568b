"""``script`` adapters (R-WEB-4): code for pages whose list lives only in their scripts.

An adapter is an object with a ``name`` and an async ``read(ctx)`` that returns
the entries and every response it fetched. Adapters are registered in code
(:func:`register_adapter`) or by installed packages through the entry point
group ``tidings.script_adapters`` (each entry point names an adapter object or
a class to instantiate). An adapter that no longer finds what it expects raises
:class:`~tidings.errors.ParseError` saying what it looked for: it never falls
back to scraping the page's menus.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from tidings.errors import ConfigError
from tidings.model import ItemData, RawResponse
from tidings.readers.base import ReadContext

ENTRY_POINT_GROUP = "tidings.script_adapters"


@dataclass(slots=True)
class AdapterResult:
    items: list[ItemData] = field(default_factory=list)
    raw: list[RawResponse] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class ScriptAdapter(Protocol):
    name: str
    #: the adapter's own keys (config ``adapter_options``), checked when a source is saved
    options_model: type[BaseModel]

    async def read(self, ctx: ReadContext, options: Any) -> AdapterResult:
        """The entries of ``ctx.source``; ParseError when the page no longer has them.
        ``options`` is an instance of ``options_model``."""
        ...


_ADAPTERS: dict[str, ScriptAdapter] = {}


def register_adapter(adapter: ScriptAdapter) -> None:
    _ADAPTERS[adapter.name] = adapter


@cache
def _load_entry_points() -> None:
    from tidings.readers.web.bundle import BundleList  # the built-in example

    register_adapter(BundleList())
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        loaded = ep.load()
        register_adapter(loaded() if isinstance(loaded, type) else loaded)


def adapter_names() -> list[str]:
    _load_entry_points()
    return sorted(_ADAPTERS)


def get_adapter(name: str) -> ScriptAdapter:
    _load_entry_points()
    try:
        return _ADAPTERS[name]
    except KeyError:
        known = ", ".join(sorted(_ADAPTERS)) or "none"
        raise ConfigError(f"no script adapter {name!r} (known: {known})") from None


def check_options(name: str, options: dict[str, Any]) -> Any:
    """The adapter's options, validated (ValueError naming the adapter and the problem)."""
    try:
        adapter = get_adapter(name)
    except ConfigError as exc:
        raise ValueError(exc.message) from None
    try:
        return adapter.options_model.model_validate(options)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"adapter_options.{where}: {first['msg']}") from None
