"""A source kind from outside tidings, as another package would ship it (issue 28).

One module: the reader and the ``Kind`` record. ``tests/test_kind_plugin.py``
installs it through an entry point of the group ``tidings.kinds`` and runs it
end to end; nothing in tidings names it.

A "shelf" is a JSON object at one address, listing the entries of several
people: ``{"ann": [{"id": 1, "title": ..., "url": ...}], ...}``; a source is one
person on a shelf (``<shelf address>?for=ann``). Sources on the same shelf are
read together with one request (a batch reader), each keeps its own run and
cursor. Reading it is a hot signal (its own cost class) and a new shelf source is
first checked 20 minutes after it is added.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from tidings.errors import ParseError, TidingsError
from tidings.model import CostClass, ItemData, RawResponse, Source, SourceKind
from tidings.readers.base import ReadContext, ReadResult
from tidings.readers.kind import Kind
from tidings.readers.options import ReaderConfig

TOY = SourceKind("toy")
FIRST_INTERVAL_MIN = 20


class ShelfConfig(ReaderConfig):
    person: str


class ShelfReader:
    kind = TOY
    config_model: type[ReaderConfig] = ShelfConfig
    max_batch = 10

    def batch_key(self, source: Source, config: ReaderConfig) -> str | None:
        return _shelf(source.url)  # one shelf, one request

    async def read(self, ctx: ReadContext) -> ReadResult:
        (result,) = await self.read_batch([ctx])
        if isinstance(result, TidingsError):
            raise result
        return result

    def parse_raw(self, source: Source, raw: RawResponse) -> ReadResult:
        person = str(source.config.get("person"))
        return ReadResult(items=_entries(json.loads(raw.body), person, raw.url))

    async def read_batch(self, contexts: Sequence[ReadContext]
                         ) -> Sequence[ReadResult | TidingsError]:
        url = _shelf(contexts[0].source.url)
        resp = await contexts[0].fetcher.fetch(url, headers={"Accept": "application/json"})
        shelf = json.loads(resp.content)
        out: list[ReadResult | TidingsError] = []
        for ctx in contexts:
            person = str(ctx.source.config.get("person"))
            try:
                items = _entries(shelf, person, url)
            except ParseError as exc:
                out.append(exc)
                continue
            out.append(ReadResult(items=items, cursor={"seen": len(items)}, http_status=200))
        return out


def _shelf(url: str) -> str:
    return url.split("?", 1)[0]


def _entries(shelf: Mapping[str, Any], person: str, url: str) -> tuple[ItemData, ...]:
    if person not in shelf:
        raise ParseError(f"{url}: nobody called {person!r} on this shelf", url)
    return tuple(ItemData(title=e["title"], url=e["url"], guid=f"toy:{person}:{e['id']}")
                 for e in shelf[person])


def hot(config: Mapping[str, Any]) -> CostClass:
    return CostClass.HOT_SIGNAL


KIND = Kind(name=TOY, reader=ShelfReader, summary="people's entries on a shared shelf",
            cost=hot, first_interval_min=FIRST_INTERVAL_MIN)
