"""Bodies that come by a separate paid call, kept in the source's cursor until they do.

A WeChat post's text and an X long-form article are bought one by one after the
list or search. When such a call fails for a reason that passes (rate limit,
provider trouble, 5xx), the post is stored without its body and waits here, in
the cursor saved with the batch: the next runs try again, at most
:data:`MAX_TRIES` times within :data:`RETRY_WITHIN`, then give up (R-WX-3). The
entry carries the whole item, because a reader re-emits it with its body and
never reads storage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from tidings.errors import BudgetExhaustedError
from tidings.model import BodyState, ItemData

MAX_TRIES = 3
RETRY_WITHIN = timedelta(days=3)
#: bodies waiting per source at most (the oldest given up first)
MAX_WAITING = 50
CURSOR_KEY = "bodies"


@dataclass(frozen=True, slots=True)
class Waiting:
    """A stored item whose body is still to be bought."""

    item: ItemData
    ref: str  # what the body call needs: a post URL, a tweet id
    tries: int
    first: datetime


def _item_json(item: ItemData) -> dict[str, Any]:
    return {"title": item.title, "url": item.url, "key": item.key, "summary": item.summary,
            "published_at": item.published_at.isoformat() if item.published_at else None,
            "author": item.author, "images": list(item.images), "raw": dict(item.raw)}


def _item_of(data: Mapping[str, Any]) -> ItemData:
    when = data.get("published_at")
    return ItemData(title=str(data.get("title") or ""), url=data.get("url"),
                    key=data.get("key"), summary=str(data.get("summary") or ""),
                    published_at=datetime.fromisoformat(when) if isinstance(when, str) else None,
                    author=str(data.get("author") or ""),
                    images=tuple(data.get("images") or ()), raw=dict(data.get("raw") or {}),
                    body_state=BodyState.PENDING)


def load(cursor: Mapping[str, Any]) -> list[Waiting]:
    """The waiting bodies a cursor holds (malformed entries are dropped)."""
    out = []
    for entry in cursor.get(CURSOR_KEY) or ():
        try:
            out.append(Waiting(_item_of(entry["item"]), str(entry["ref"]), int(entry["tries"]),
                               datetime.fromisoformat(entry["first"])))
        except (KeyError, TypeError, ValueError):
            continue
    return out


def dump(waiting: Sequence[Waiting]) -> list[dict[str, Any]]:
    return [{"item": _item_json(w.item), "ref": w.ref, "tries": w.tries,
             "first": w.first.isoformat()} for w in waiting[-MAX_WAITING:]]


def facts(cursor: Mapping[str, Any]) -> list[tuple[str, str]]:
    """How many bodies wait, for the source's page (``Kind.facts``)."""
    count = len(cursor.get(CURSOR_KEY) or ())
    return [("Bodies waiting", f"{count} (bought again at most {MAX_TRIES} times within "
             f"{RETRY_WITHIN.days} days)")] if count else []


def due(waiting: Sequence[Waiting], now: datetime) -> list[Waiting]:
    """The entries still worth a try: fewer than MAX_TRIES, within RETRY_WITHIN."""
    return [w for w in waiting if w.tries < MAX_TRIES and now - w.first <= RETRY_WITHIN]


def tried(exc: BaseException) -> bool:
    """Whether a body call that raised ``exc`` was sent: one held back by our budget or
    by a provider's known trouble is no try, or a long pause would use up all three
    with no request made (R-WX-3)."""
    return not isinstance(exc, BudgetExhaustedError) or exc.sent


def failed(entry: Waiting) -> Waiting:
    """One more failed try, counted in the item's raw too (shown with it when stored)."""
    tries = entry.tries + 1
    return replace(entry, tries=tries, item=replace(
        entry.item, raw={**entry.item.raw, "body_tries": tries}))
