"""Readers, one per source kind, found through a registry (SPEC section 6).

The pipeline asks ``get_reader(source.kind)`` and never names a reader class,
so adding a kind means writing a module that satisfies
:class:`tidings.readers.base.Reader` and registering it below (docs/readers.md).
"""

from __future__ import annotations

from collections.abc import Callable

from tidings.errors import ConfigError
from tidings.model import SourceKind
from tidings.readers.base import ReadContext, Reader, ReadResult
from tidings.readers.jsonlist.reader import JsonListReader
from tidings.readers.rss.reader import RssReader
from tidings.readers.web.reader import WebListReader
from tidings.readers.wechat.reader import WechatReader
from tidings.readers.x.reader import XReader

_FACTORIES: dict[SourceKind, Callable[[], Reader]] = {}
_INSTANCES: dict[SourceKind, Reader] = {}


def register(kind: SourceKind, factory: Callable[[], Reader]) -> None:
    """Make ``factory`` the reader of ``kind`` (readers are stateless; one instance each)."""
    _FACTORIES[kind] = factory
    _INSTANCES.pop(kind, None)


def get_reader(kind: SourceKind | str) -> Reader:
    """The reader for a source kind; ConfigError when no reader handles it."""
    try:
        key = SourceKind(kind)
    except ValueError:
        raise ConfigError(f"unknown source kind {kind!r}") from None
    reader = _INSTANCES.get(key)
    if reader is None:
        factory = _FACTORIES.get(key)
        if factory is None:
            raise ConfigError(f"no reader for source kind {key.value!r}")
        reader = _INSTANCES[key] = factory()
    return reader


def registered_kinds() -> frozenset[SourceKind]:
    return frozenset(_FACTORIES)


register(SourceKind.RSS, RssReader)
register(SourceKind.WEB_LIST, WebListReader)
register(SourceKind.JSON_LIST, JsonListReader)
register(SourceKind.X, XReader)
register(SourceKind.WECHAT, WechatReader)

__all__ = ["ReadContext", "ReadResult", "Reader", "get_reader", "register", "registered_kinds"]
