"""One request to a paid JSON API, with its trouble sorted into whose it is.

The X and WeChat readers speak different contracts but fail the same ways, and
who is to blame decides what happens to the sources: a refused key, a used-up
balance, a rate limit, a provider that is down or answers garbage is the
provider's trouble (:class:`~tidings.errors.ProviderError`: no source backs
off, the ledger reports it once and sends nothing more for a while), while an
answer about one account (not found, suspended) is that source's failure.
Every request goes through ``ctx.paid.call``, so it is checked against the
budget before it is sent and recorded after, whatever happened.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from tidings.errors import FetchError, HTTPStatusError, ProviderError
from tidings.model import RawResponse
from tidings.net import retry_after
from tidings.readers.base import CallNote, ReadContext
from tidings.readers.options import Provider

#: how long a provider that is down or rate limited without Retry-After is left alone
PAUSE_DOWN = timedelta(minutes=5)
PAUSE_RATE = timedelta(minutes=1)
#: statuses that say the request itself (a cursor, a query) was refused
REQUEST_REFUSED = frozenset({400, 404, 422})


@dataclass(frozen=True, slots=True)
class Answer:
    """A paid API's JSON answer, and the response as the raw archive keeps it."""

    data: Mapping[str, Any]
    raw: RawResponse


@dataclass(frozen=True, slots=True)
class Request:
    """What to send: ``purpose`` names it in the ledger; ``body`` makes it a POST."""

    purpose: str
    url: str
    source_ids: Sequence[str]
    params: Mapping[str, str] | None = None
    body: Mapping[str, Any] | None = None
    bearer: bool = True  # the key as a Bearer header; False: the body carries it
    #: a call about one item (a post's body, an article): a 5xx is that item's passing
    #: failure, retried with it, not a sign that the provider is down for everyone
    per_item: bool = False


def _provider_trouble(p: Provider, exc: HTTPStatusError, now: datetime) -> ProviderError | None:
    """The provider's side of an error status, or None when it is about the request."""
    if exc.status in (401, 403):
        return ProviderError(p.name, f"API key {p.masked} refused (HTTP {exc.status}); "
                             f"set providers.{p.name}.api_key")
    if exc.status == 402:
        return ProviderError(p.name, "balance used up (HTTP 402); top the account up",
                             now + PAUSE_DOWN)
    if exc.status == 429:
        return ProviderError(p.name, "rate limited (HTTP 429)",
                             exc.retry_after or now + PAUSE_RATE)
    if exc.status >= 500:
        return ProviderError(p.name, f"provider failing (HTTP {exc.status})",
                             exc.retry_after or now + PAUSE_DOWN)
    return None


def _with_query(url: str, params: Mapping[str, str] | None) -> str:
    if not params:
        return url
    return f"{url}?{urlencode(params)}"


def decode(p: Provider, content: bytes) -> Mapping[str, Any]:
    """The answer as a JSON object; anything else is the provider's garbage."""
    try:
        data = json.loads(content)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ProviderError(p.name, "answered with something that is not JSON") from None
    if not isinstance(data, dict):
        raise ProviderError(p.name, f"answered a JSON {type(data).__name__}, not an object")
    return data


#: reads a contract's own signals out of a 200 answer, inside the recorded call: may set
#: the cost the provider reports on the note, may raise (an error code in the body)
Inspect = Callable[[Provider, Mapping[str, Any], CallNote], None]


def _nothing(p: Provider, data: Mapping[str, Any], note: CallNote) -> None:
    return None


async def call(ctx: ReadContext, provider: str, request: Request,
               inspect: Inspect = _nothing) -> Answer:
    """Send ``request`` as one recorded paid call and return its JSON answer."""
    p = ctx.paid.provider(provider)
    url = _with_query(request.url, request.params)
    headers = {"Accept": "application/json"}
    if request.bearer:
        headers["Authorization"] = f"Bearer {p.api_key}"
    async with ctx.paid.call(p.name, request.purpose, request.source_ids) as note:
        try:
            resp = await ctx.fetcher.fetch(
                url, headers=headers, method="POST" if request.body is not None else "GET",
                json=dict(request.body) if request.body is not None else None,
                proxy=False if p.direct else None, raise_for_status=False)
        except FetchError as exc:
            raise ProviderError(p.name, f"unreachable ({exc.kind}: {exc})",
                                ctx.now + PAUSE_DOWN) from None
        if resp.status >= 400:
            # Retry-After is read against the run's clock, not the wall's
            refused = HTTPStatusError(request.url, f"{request.url}: HTTP {resp.status}",
                                      resp.status, retry_after(resp, ctx.now))
            if request.per_item and resp.status >= 500:
                raise refused
            raise _provider_trouble(p, refused, ctx.now) or refused
        data = decode(p, resp.content)
        inspect(p, data, note)
        raw = RawResponse(url=request.url, final_url=resp.final_url, fetched_at=ctx.now,
                          status=resp.status, headers=dict(resp.headers), body=resp.content)
        return Answer(data, raw)
