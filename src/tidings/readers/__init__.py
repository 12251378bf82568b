"""Source kinds and their readers, found through one registry (SPEC section 6, issue 28).

Each kind's module exports a :class:`~tidings.readers.kind.Kind` record (its
reader and its traits); the rest of tidings asks this registry about a source's
kind and never names one. The built-in kinds are registered below; an installed
package adds one through the entry point group ``tidings.kinds`` (each entry
point names a ``Kind`` or a callable returning one): one module and its
registration, nothing changed here (docs/readers.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import cache
from importlib.metadata import entry_points

from tidings.errors import ConfigError
from tidings.model import Source, SourceKind
from tidings.readers import external
from tidings.readers.base import ReadContext, Reader, ReadResult
from tidings.readers.jsonlist import kind as jsonlist_kind
from tidings.readers.kind import Account, Kind
from tidings.readers.rss import kind as rss_kind
from tidings.readers.web import kind as web_kind
from tidings.readers.wechat import kind as wechat_kind
from tidings.readers.x import kind as x_kind

ENTRY_POINT_GROUP = "tidings.kinds"
log = logging.getLogger(__name__)

_KINDS: dict[str, Kind] = {}
_INSTANCES: dict[str, Reader] = {}


def register_kind(kind: Kind) -> None:
    """Make ``kind`` known (a kind registered again replaces the earlier record)."""
    _KINDS[kind.name] = kind
    _INSTANCES.pop(kind.name, None)


def register(kind: SourceKind | str, factory: Callable[[], Reader]) -> None:
    """Make ``factory`` the reader of a known kind (readers are stateless; one instance
    each): benchmarks and tests swap a kind's reader, its traits stay."""
    register_kind(replace(kind_of(kind), reader=factory))


@cache
def load_entry_points() -> None:
    """Register the kinds installed packages declare (once; ``cache_clear`` to look again).

    A package whose entry point does not load, or names something that is not a
    ``Kind``, is left out with a warning naming it: its sources fail their runs
    with "unknown source kind", every other kind keeps working."""
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = ep.load()
            kind = loaded() if callable(loaded) and not isinstance(loaded, Kind) else loaded
        except Exception as exc:  # someone else's package: any fault, reported
            log.warning("kind %r (%s) not loaded: %s: %s", ep.name, ep.value,
                        type(exc).__name__, (str(exc).splitlines() or [""])[0])
            continue
        if not isinstance(kind, Kind):
            log.warning("kind %r (%s) not loaded: it names a %s, not a Kind", ep.name,
                        ep.value, type(kind).__name__)
            continue
        register_kind(kind)


def kind_of(name: SourceKind | str) -> Kind:
    """The record of a kind; ConfigError naming the known ones when there is none."""
    load_entry_points()
    found = _KINDS.get(str(name))
    if found is None:
        raise ConfigError(f"unknown source kind {str(name)!r} (known: {', '.join(_KINDS)})")
    return found


def all_kinds() -> tuple[Kind, ...]:
    load_entry_points()
    return tuple(_KINDS.values())


def registered_kinds() -> frozenset[SourceKind]:
    """The kinds that have a reader (every kind a source can be collected from)."""
    return frozenset(k.name for k in all_kinds() if k.reader is not None)


def get_reader(kind: SourceKind | str) -> Reader:
    """The reader for a source kind; ConfigError when no reader handles it."""
    record = kind_of(kind)
    reader = _INSTANCES.get(record.name)
    if reader is None:
        if record.reader is None:
            raise ConfigError(f"no reader for source kind {record.name!r}")
        reader = _INSTANCES[record.name] = record.reader()
    return reader


def _one(trait: str) -> Kind:
    found = [k for k in all_kinds() if getattr(k, trait)]
    if len(found) != 1:
        raise ConfigError(f"{len(found)} source kinds are marked {trait!r}; one must be")
    return found[0]


def feed_kind() -> SourceKind:
    """The kind autodiscovery finds: the default of a new source."""
    return _one("feed").name


def proposed_kind() -> SourceKind:
    """The kind a page's proposed list rules are for."""
    return _one("proposed").name


def pushed_kind() -> SourceKind:
    """The kind of sources that are pushed to and never fetched."""
    found = [k for k in all_kinds() if not k.fetched]
    if len(found) != 1:
        raise ConfigError(f"{len(found)} source kinds are never fetched; one must be")
    return found[0].name


def parse_account(text: str) -> tuple[Kind, Account] | None:
    """The kind and account an account line names (``x:@handle``...), or None."""
    text = text.strip()
    for kind in all_kinds():
        found = kind.account(text) if kind.account is not None else None
        if found is not None:
            return kind, found
    return None


def account_forms() -> list[str]:
    return [k.account_form for k in all_kinds() if k.account_form]


def own_hosts() -> Iterator[str]:
    """Hosts whose pages some kind's API serves: never fetched for a body."""
    for kind in all_kinds():
        yield from kind.own_hosts


def hub_of(source: Source) -> tuple[str, str] | None:
    """The WebSub (hub, topic) a source's reader left in its cursor, or None."""
    try:
        return kind_of(source.kind).hub(source.cursor)
    except ConfigError:
        return None


for _module in (rss_kind, web_kind, jsonlist_kind, x_kind, wechat_kind, external):
    register_kind(_module.KIND)

__all__ = [
    "ENTRY_POINT_GROUP", "Account", "Kind", "ReadContext", "ReadResult", "Reader",
    "account_forms", "all_kinds", "feed_kind", "get_reader", "hub_of", "kind_of",
    "load_entry_points", "own_hosts", "parse_account", "proposed_kind", "pushed_kind",
    "register", "register_kind", "registered_kinds",
]
