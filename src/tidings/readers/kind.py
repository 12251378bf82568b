"""What a source kind *is*, declared once by the kind's own module (issue 28).

The pipeline, the application and the web ask these traits of a kind instead of
naming it: what reading a source of it costs, how often a new one is first
checked, how its entries are keyed, whether its items' pages may be fetched,
whether a batch limit applies, what an account line for it looks like, whether
it is fetched at all. A kind's cursor stays the reader's own: when others need
something kept there (a WebSub hub), the kind answers through a trait.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tidings.model import CostClass, IdentityMode, SourceKind
from tidings.readers.base import Reader


@dataclass(frozen=True, slots=True)
class Account:
    """An account on an API named in one line (``x:@handle``): the source it becomes."""

    url: str
    name: str
    config: Mapping[str, Any] = field(default_factory=dict)


def free(config: Mapping[str, Any]) -> CostClass:
    """The cost of a kind whose reading costs nothing but bandwidth."""
    return CostClass.FREE


def paid_list(config: Mapping[str, Any]) -> CostClass:
    """The cost of a kind read through a paid API, every call of it (R-SCHED-5)."""
    return CostClass.PAID_LIST


def by_guid(config: Mapping[str, Any]) -> IdentityMode:
    """Entries keyed by their GUIDs, degrading to URLs when a batch says so."""
    return IdentityMode.GUID


def no_hub(cursor: Mapping[str, Any]) -> tuple[str, str] | None:
    return None


def no_facts(cursor: Mapping[str, Any]) -> list[tuple[str, str]]:
    return []


@dataclass(frozen=True, slots=True)
class Kind:
    """A source kind's traits; ``reader`` None: pushed to, never fetched.

    ``cost`` and ``identity`` read the source's stored config (validated);
    ``first_interval_min`` None starts a new source at the settings' interval;
    ``own_hosts`` are hosts whose pages the kind's API serves (never fetched
    for a body, whoever links them); ``batch_limited`` False exempts later runs
    from the per-run item limit (a watermark that moves past everything found);
    ``batch_cadence`` makes a source read in a batch follow the batch's cadence
    rather than its own output; ``account`` parses an account line
    (``account_form`` shows one), ``id_prefix`` starts its source ids;
    ``fixed_url`` says why a source's address may not change; ``opml``
    exports the kind's sources in OPML (their address comes back as the same
    kind); ``feed`` marks the kind autodiscovery finds; ``proposed`` the kind a
    page's proposed list rules are for; ``hub`` names the WebSub hub and topic
    the reader left in a cursor; ``facts`` what a person may see of a cursor
    (label, text), on the source's page.
    """

    name: SourceKind
    reader: Callable[[], Reader] | None
    summary: str = ""
    cost: Callable[[Mapping[str, Any]], CostClass] = free
    first_interval_min: int | None = None
    identity: Callable[[Mapping[str, Any]], IdentityMode] = by_guid
    fetch_bodies: bool = True
    own_hosts: tuple[str, ...] = ()
    batch_limited: bool = True
    batch_cadence: bool = False
    account: Callable[[str], Account | None] | None = None
    account_form: str = ""
    id_prefix: str = ""
    fixed_url: str | None = None
    opml: bool = False
    feed: bool = False
    proposed: bool = False
    hub: Callable[[Mapping[str, Any]], tuple[str, str] | None] = no_hub
    facts: Callable[[Mapping[str, Any]], list[tuple[str, str]]] = no_facts

    @property
    def fetched(self) -> bool:
        """Whether sources of this kind are read from an address (not only pushed to)."""
        return self.reader is not None
