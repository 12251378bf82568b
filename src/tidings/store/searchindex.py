"""What search indexing asks of storage (R-STORE-4): read a batch, build it, write it.

Part of the :class:`tidings.store.base.Storage` protocol, in its own module as
``stories`` is. Building an item's document (words, CJK characters, the
PostgreSQL ``tsvector``) is most of indexing's cost, and it needs no database:
the job reads a batch (:meth:`SearchIndexReads.index_inputs`), builds it away
from the writer (:meth:`SearchIndexReads.build_index`, pure CPU) and hands the
writer only the write (:meth:`SearchIndexWrites.write_index`). An item changed
between the read and the write keeps waiting: the write stores a document only
while the item still holds exactly the text and time it was built from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class IndexInput:
    """An item waiting for the index, as the document is built from it."""

    item_id: int
    sort_time: int  # microseconds since the epoch, as stored
    title: str
    body: str | None
    summary: str

    def text(self) -> tuple[int, str, str | None, str]:
        """What the write compares with the stored row."""
        return self.sort_time, self.title, self.body, self.summary


@dataclass(frozen=True, slots=True)
class IndexDoc:
    """A built document: the backend's indexed columns and what they were built from."""

    source: IndexInput
    columns: tuple[str, ...]


class SearchIndexReads(Protocol):
    def unindexed_count(self) -> int: ...

    def index_inputs(self, limit: int) -> list[IndexInput]:
        """Up to ``limit`` items waiting for the index, oldest id first."""
        ...

    def build_index(self, inputs: Sequence[IndexInput]) -> list[IndexDoc]:
        """The documents of ``inputs`` as this backend indexes them; touches no database."""
        ...


class SearchIndexWrites(Protocol):
    def write_index(self, docs: Sequence[IndexDoc]) -> int:
        """Store the documents whose items still wait and still hold the text and time
        they were built from; returns how many were stored."""
        ...

    def index_pending(self, limit: int = 5000) -> int:
        """Read, build and write up to ``limit`` items in this unit; returns how many.
        For tests and tools: the runners build away from the writer."""
        ...
