"""The reader contract: one module per source kind, none of them touches storage.

A reader gets the source (with its cursor), the guarded HTTP client and the
clock, and returns candidate items plus the new cursor. The pipeline decides
what is stored and saves the cursor only after the batch is stored. Because a
reader's only I/O is the fetcher it is handed, every reader can be tested with
recorded responses and re-run over the raw archive (``parse_raw``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar

from tidings.model import ItemData, RawResponse, Source, SourceKind
from tidings.readers.options import ReaderConfig, RequestOptions

if TYPE_CHECKING:
    from tidings.net import Fetcher


P = ParamSpec("P")
T = TypeVar("T")


class Offload(Protocol):
    """Runs a pure, CPU-bound function (parsing, sanitizing) somewhere.

    Large rounds pass a process pool so that parsing uses every core; the
    default runs the function inline. Functions and arguments must pickle.
    """

    async def __call__(self, func: Callable[P, T], /, *args: P.args,
                       **kwargs: P.kwargs) -> T: ...


async def inline(func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """The default :class:`Offload`: just call it."""
    return func(*args, **kwargs)


@dataclass(frozen=True, slots=True)
class ReadContext:
    """What a reader gets: the source (with its cursor), the one fetcher, the time.

    ``config`` is the source's config validated by the kind's whole schema (an
    instance of the reader's ``config_model``, common keys included); ``request``
    the per-source request options every fetch of the source uses.
    """

    source: Source
    fetcher: Fetcher
    now: datetime
    offload: Offload = inline
    config: ReaderConfig = field(default_factory=ReaderConfig)
    request: RequestOptions = field(default_factory=RequestOptions)


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
