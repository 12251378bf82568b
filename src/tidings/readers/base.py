"""The reader contract: one module per source kind, none of them touches storage.

A reader gets the source (with its cursor), the guarded HTTP client and the
clock, and returns candidate items plus the new cursor. The pipeline decides
what is stored and saves the cursor only after the batch is stored. Because a
reader's only I/O is the fetcher it is handed, every reader can be tested with
recorded responses and re-run over the raw archive (``parse_raw``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar, runtime_checkable

from tidings.errors import ConfigError, TidingsError
from tidings.model import ItemData, RawResponse, Source, SourceKind
from tidings.readers.options import Provider, ReaderConfig, RequestOptions

if TYPE_CHECKING:
    from tidings.net import Fetcher


P = ParamSpec("P")
T = TypeVar("T")


class Offload(Protocol):
    """Runs a pure, CPU-bound function (parsing, sanitizing) somewhere.

    The default runs the function inline; many runs at once make their steps
    take turns through the event loop (``pipeline/fair.py``).
    """

    async def __call__(self, func: Callable[P, T], /, *args: P.args,
                       **kwargs: P.kwargs) -> T: ...


async def inline(func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """The default :class:`Offload`: just call it."""
    return func(*args, **kwargs)


@dataclass(slots=True)
class CallNote:
    """A paid call in progress: what the reader learns about it (the cost the API
    reports, a provider-level error in a 200 answer) before it is recorded."""

    status: str = "ok"
    cost: float | None = None  # None: the provider's cost_per_call


class PaidCalls(Protocol):
    """The spend ledger, as a reader uses it (R-SCHED-3): readers never touch storage,
    so the pipeline hands them this.

    ``call`` wraps one request to a paid API: it raises
    :class:`~tidings.errors.BudgetExhaustedError` before anything is sent when the
    call would pass the provider's daily budget, and records the call when the
    block ends (failed when it raises).
    """

    def provider(self, name: str) -> Provider:
        """The provider's settings; ConfigError when it is not configured."""
        ...

    def call(self, provider: str, purpose: str, source_ids: Sequence[str]
             ) -> AbstractAsyncContextManager[CallNote]: ...


class NoPaidCalls:
    """The ledger of a context that may not spend (reparse, tests of free readers)."""

    def provider(self, name: str) -> Provider:
        raise ConfigError(f"paid API {name!r} is not available here")

    def call(self, provider: str, purpose: str, source_ids: Sequence[str]
             ) -> AbstractAsyncContextManager[CallNote]:
        raise ConfigError(f"paid API {provider!r} is not available here")


@dataclass(frozen=True, slots=True)
class ReadContext:
    """What a reader gets: the source (with its cursor), the one fetcher, the time.

    ``config`` is the source's config validated by the kind's whole schema (an
    instance of the reader's ``config_model``, common keys included); ``request``
    the per-source request options every fetch of the source uses; ``paid`` the
    spend ledger, for readers of paid APIs.
    """

    source: Source
    fetcher: Fetcher
    now: datetime
    offload: Offload = inline
    config: ReaderConfig = field(default_factory=ReaderConfig)
    request: RequestOptions = field(default_factory=RequestOptions)
    paid: PaidCalls = field(default_factory=NoPaidCalls)


@dataclass(frozen=True, slots=True)
class ReadResult:
    """What one reader run produced. ``cursor`` replaces the source's cursor."""

    items: tuple[ItemData, ...] = ()
    cursor: Mapping[str, Any] = field(default_factory=dict)
    not_modified: bool = False
    raw: tuple[RawResponse, ...] = ()
    http_status: int | None = None
    bytes: int = 0
    final_url: str | None = None
    title: str = ""  # the feed's own title
    site_url: str | None = None
    not_before: datetime | None = None  # caching hints (R-RSS-7): never fetch earlier
    warnings: tuple[str, ...] = ()
    pages: int = 1


class Reader(Protocol):
    kind: SourceKind
    #: the keys of this kind's own config (R-SCHED-2); the pipeline adds the common ones
    config_model: type[ReaderConfig]

    async def read(self, ctx: ReadContext) -> ReadResult:
        """Fetch and parse; raise FetchError/ParseError/ConfigError on failure."""
        ...

    def parse_raw(self, source: Source, raw: RawResponse) -> ReadResult:
        """Parse an archived response again, with no network (R-EXTRACT-5)."""
        ...


@runtime_checkable
class BatchReader(Protocol):
    """A reader that can read a group of sources in one go (one paid search for 24
    accounts, one list answer reused by the sources of a window).

    ``batch_key`` says which sources may go together (None: this one goes alone);
    the round and the scheduler group the due sources of a kind by it, at most
    ``max_batch`` at a time, in a stable order (by source id). ``read_batch`` gets
    one context per source and answers one result or error per source, in order:
    runs, cursors and failures stay per source.
    """

    max_batch: int

    def batch_key(self, source: Source, config: ReaderConfig) -> str | None: ...

    async def read_batch(self, contexts: Sequence[ReadContext]
                         ) -> Sequence[ReadResult | TidingsError]: ...
