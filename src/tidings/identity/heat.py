"""Story heat (R-DEDUP-12): how many independent sources told a story lately.

Each independent source that reported the story in the last 48 hours adds
``0.5 ** (age / 24 h)`` (a report of now adds 1, one of a day ago 0.5). Sources
that are not independent count once: sources of one owner (the same site host)
and a source with the one it reprints from (the reprint graph: it has listed items
the other owns). Historical items (R-DEDUP-7) add nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from tidings.identity.timeline import is_historical

__all__ = ["HALF_LIFE", "HEAT_WINDOW", "HeatMember", "heat", "owner_of"]

HEAT_WINDOW = timedelta(hours=48)
HALF_LIFE = timedelta(hours=24)


@dataclass(frozen=True, slots=True)
class HeatMember:
    source_id: str
    site_url: str
    at: datetime
    published_at: datetime | None
    discovered_at: datetime
    backfill: bool


def owner_of(site_url: str) -> str:
    """The owner a site stands for: its host without ``www.`` (empty when unknown)."""
    host = (urlsplit(site_url).hostname or "") if site_url else ""
    return host.removeprefix("www.")


def _groups(members: Sequence[HeatMember], reprints: Collection[tuple[str, str]]
            ) -> dict[str, str]:
    """source id -> the representative of its independent group."""
    parent: dict[str, str] = {m.source_id: m.source_id for m in members}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    by_owner: dict[str, str] = {}
    for m in members:
        owner = owner_of(m.site_url)
        if owner:
            first = by_owner.setdefault(owner, m.source_id)
            parent[find(m.source_id)] = find(first)
    for a, b in reprints:
        if a in parent and b in parent:
            parent[find(a)] = find(b)
    return {s: find(s) for s in parent}


def heat(members: Sequence[HeatMember], now: datetime,
         reprints: Collection[tuple[str, str]] = ()) -> float:
    """The story's heat at ``now``; see the module docstring."""
    group = _groups(members, reprints)
    first: dict[str, datetime] = {}
    for m in members:
        if is_historical(m.backfill, m.published_at, m.discovered_at):
            continue
        if not (now - HEAT_WINDOW <= m.at <= now):
            continue
        key = group[m.source_id]
        if key not in first or m.at < first[key]:
            first[key] = m.at
    return float(sum(0.5 ** ((now - at) / HALF_LIFE) for at in first.values()))
