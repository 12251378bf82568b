"""What a reader is told about how to ask: request options, and its own config's shape.

The keys every kind shares (user agent, headers, cookie, proxy, filters, limits,
detail pages...) are validated and interpreted by the pipeline; a reader gets
the request options already checked (:class:`RequestOptions`) and declares only
the keys of its own kind, as a pydantic model (:class:`ReaderConfig`), so that a
source's whole config is checked by one schema when it is saved (R-SCHED-2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict


class ReaderConfig(BaseModel):
    """Base of a kind's own config keys: unknown keys are refused, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


@dataclass(frozen=True, slots=True)
class Provider:
    """A paid API as the settings name it (``[providers.NAME]``).

    The key is never shown whole: ``repr`` and :attr:`masked` keep its last four
    characters, so a log line or an error message cannot leak it.
    """

    name: str
    base_url: str
    api_key: str = field(repr=False)
    daily_calls: int | None = None  # None: no limit on calls
    daily_cost: float | None = None  # None: no limit on money
    cost_per_call: float = 0.0
    direct: bool = True  # paid APIs go around the egress proxy by default (R-HTTP-6)

    @property
    def masked(self) -> str:
        return "…" + self.api_key[-4:] if self.api_key else "(none)"

    def __repr__(self) -> str:
        return f"Provider({self.name!r}, {self.base_url!r}, key {self.masked})"


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """Per-source request options (R-RSS-9), checked when the source was saved.

    ``headers`` are extra headers (the cookie among them when one is configured);
    ``user_agent`` replaces tidings' own only where an operator set one; ``proxy``
    forces the egress proxy on or off (None: the routing rules decide).
    """

    headers: Mapping[str, str] = field(default_factory=dict)
    user_agent: str | None = None
    proxy: bool | None = None
