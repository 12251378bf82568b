"""A cluster worker's rounds: the collect jobs it ran, told as ``tidings serve`` tells a
round (one line: how many ok, what was new, each failing source and why)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from tidings.model import RunCounts
from tidings.schedule.collector import log_round

#: under steady load a round line is written at least this often
ROUND_SECONDS = 60.0


@dataclass(slots=True)
class RoundLog:
    """A worker's collect jobs as rounds: outcomes gather while jobs run, and one line
    is written when the last running job ends (or every ``every`` seconds under load)."""

    every: float = ROUND_SECONDS
    results: dict[str, RunCounts] = field(default_factory=dict)
    running: int = 0
    collected: int = 0
    since: float = field(default_factory=time.monotonic)

    def start(self) -> None:
        self.running += 1

    def end(self, counts: Mapping[str, RunCounts]) -> None:
        self.running -= 1
        self.results.update(counts)
        self.collected += len(counts)
        if self.running <= 0 or time.monotonic() - self.since >= self.every:
            self.flush()

    def flush(self) -> None:
        log_round(self.results)
        self.results = {}
        self.since = time.monotonic()
