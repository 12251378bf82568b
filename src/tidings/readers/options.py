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
class RequestOptions:
    """Per-source request options (R-RSS-9), checked when the source was saved.

    ``headers`` are extra headers (the cookie among them when one is configured);
    ``user_agent`` replaces tidings' own only where an operator set one; ``proxy``
    forces the egress proxy on or off (None: the routing rules decide).
    """

    headers: Mapping[str, str] = field(default_factory=dict)
    user_agent: str | None = None
    proxy: bool | None = None
