"""What the pipeline needs from the outside world, in one value the facade builds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from tidings.net import Fetcher
from tidings.pipeline.config import Filters
from tidings.readers.base import NoPaidCalls, Offload, PaidCalls, inline
from tidings.settings import Settings
from tidings.store.base import Reads
from tidings.store.writer import Writer


@dataclass(frozen=True, slots=True)
class PipelineEnv:
    """What the pipeline needs from the outside world; built by the facade.

    ``store`` only reads: every write is a step handed to ``writer`` (the one
    write path, ``tidings.store.writer``).
    """

    store: Reads
    writer: Writer
    fetcher: Fetcher
    settings: Settings
    clock: Callable[[], datetime]
    filters: Filters | None = None  # the settings file's rules for every source (R-SCHED-9)
    paid: PaidCalls = field(default_factory=NoPaidCalls)  # the spend ledger (R-SCHED-3)
    offload: Offload = inline  # CPU steps; rounds make them take turns (pipeline/fair.py)
