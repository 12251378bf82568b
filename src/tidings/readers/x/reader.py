"""The ``x`` reader: X accounts through a SocialData-compatible search API (R-X-1..5).

Every request is a paid call, so the reader is built around asking little: one
search answers up to 24 accounts (:mod:`.query`), a watermark in each account's
cursor makes the provider return only new tweets, and a search that does not
finish in 10 pages leaves a resumable segment instead of asking again from the
top. Contract (docs/readers.md): ``GET {base}/twitter/search?query=&type=Latest
[&cursor=]`` answers ``{"tweets": [...], "next_cursor": ...}``;
``GET {base}/twitter/article/{id}`` answers the tweet with its ``article``.
x.com itself is never fetched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import AfterValidator, StrictStr

from tidings.errors import (
    BudgetExhaustedError,
    HTTPStatusError,
    ParseError,
    ProviderError,
    TidingsError,
)
from tidings.model import ItemData, RawResponse, Source, SourceKind
from tidings.readers import bodies
from tidings.readers.base import CallNote, ReadContext, ReadResult
from tidings.readers.options import Provider, ReaderConfig
from tidings.readers.paid import REQUEST_REFUSED, Request, call
from tidings.readers.x import query as q
from tidings.readers.x.tweets import Tweet, parse_tweets, with_article

PROVIDER = "socialdata"
MAX_PAGES = 10
FIRST_PAGES = 1
MAX_SEGMENTS = 5


def _handle(value: str) -> str:
    handle = value.strip().removeprefix("@")
    if not q.HANDLE.match(handle):
        raise ValueError(f"not an X handle: {value!r} (letters, digits, _; at most 15)")
    return handle


class XConfig(ReaderConfig):
    handle: Annotated[StrictStr, AfterValidator(_handle)]
    provider: StrictStr = PROVIDER


@dataclass(slots=True)
class _Member:
    ctx: ReadContext
    handle: str  # lower case, as tweets are routed
    since_id: int | None
    tweets: dict[int, Tweet] = field(default_factory=dict)
    raws: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    pages: int = 0


@dataclass(frozen=True, slots=True)
class Segment:
    """An unfinished search: its query (with its since_id), where to go on, and the
    oldest tweet id it reached (so a refused cursor can be replaced by ``max_id``)."""

    query: str
    cursor: str
    below: int | None = None

    def restarted(self) -> Segment:
        """The same search from where it stopped, without the cursor the provider refused."""
        bound = f" max_id:{self.below - 1}" if self.below else ""
        return Segment(q.MAX_ID.sub("", self.query) + bound, "")


def _by_author(pages: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """A search's raw tweets by author (lower case): each account archives its own
    tweets only, so a reparse of its run finds no one else's and an account that
    had nothing stores nothing."""
    out: dict[str, list[Any]] = {}
    for page in pages:
        for tweet in page.get("tweets") or ():
            user = tweet.get("user") if isinstance(tweet, Mapping) else None
            name = user.get("screen_name") if isinstance(user, Mapping) else None
            if isinstance(name, str):
                out.setdefault(name.lower(), []).append(tweet)
    return out


def _int(value: Any) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


def _segments(cursor: Mapping[str, Any]) -> list[Segment]:
    out = []
    for s in cursor.get("segments") or ():
        if isinstance(s, Mapping) and isinstance(s.get("query"), str) \
                and isinstance(s.get("cursor"), str):
            out.append(Segment(s["query"], s["cursor"], _int(s.get("below"))))
    return out


def _inspect(p: Provider, data: Mapping[str, Any], note: CallNote) -> None:
    if data.get("status") == "error":
        raise ProviderError(p.name, f"error answer: {str(data.get('message'))[:160]}")
    if not isinstance(data.get("tweets"), list):
        raise ProviderError(p.name, "answer without a 'tweets' list")


@dataclass(slots=True)
class _Search:
    """One query paged through: what it found, and where it stopped unfinished."""

    tweets: list[Tweet] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    pages: list[Any] = field(default_factory=list)
    left: Segment | None = None
    warning: str | None = None


class XReader:
    kind = SourceKind("x")
    config_model: type[ReaderConfig] = XConfig
    max_batch = q.MAX_ACCOUNTS

    def batch_key(self, source: Source, config: ReaderConfig) -> str | None:
        """Accounts with a watermark share searches, per provider and visibility."""
        if _int(source.cursor.get("since_id")) is None:
            return None
        provider = config.provider if isinstance(config, XConfig) else PROVIDER
        return f"{provider}/{source.visibility.value}"

    async def read(self, ctx: ReadContext) -> ReadResult:
        (result,) = await self.read_batch([ctx])
        if isinstance(result, TidingsError):
            raise result
        return result

    def parse_raw(self, source: Source, raw: RawResponse) -> ReadResult:
        try:
            data = json.loads(raw.body)
        except ValueError:
            raise ParseError(f"{raw.url}: archived search answer is not JSON", raw.url) from None
        pages = data.get("pages") if isinstance(data, Mapping) else None
        tweets = [t for page in pages or () if isinstance(page, Mapping)
                  for t in page.get("tweets") or ()]
        kept, skipped = parse_tweets(tweets)
        return ReadResult(items=tuple(t.item for t in kept), warnings=tuple(skipped))

    async def read_batch(self, contexts: Sequence[ReadContext]
                         ) -> Sequence[ReadResult | TidingsError]:
        members = [_Member(c, _config(c).handle.lower(), _int(c.source.cursor.get("since_id")))
                   for c in contexts]
        first = contexts[0]
        provider = _config(first).provider
        segments: list[Segment] = []
        for m in members:
            segments.extend(s for s in _segments(m.ctx.source.cursor) if s not in segments)
        left: list[Segment] = []
        for group in q.pack([_config(m.ctx).handle for m in members]):
            chosen = [m for m in members if m.handle in {h.lower() for h in group}]
            found = await self._search(first, provider, chosen, segment=None)
            self._route(found, chosen, members)
            if found.left is not None:
                left.append(found.left)
        for seg in segments:  # older unfinished searches: up to 10 pages each (R-X-4)
            asked = q.handles_of(seg.query)
            chosen = [m for m in members if m.handle in asked] or list(members)
            found = await self._search(first, provider, chosen, segment=seg)
            self._route(found, chosen, members)
            if found.left is not None:
                left.append(found.left)
        return [await self._result(m, provider, left) for m in members]

    async def _search(self, ctx: ReadContext, provider: str, chosen: Sequence[_Member],
                      segment: Segment | None) -> _Search:
        p = ctx.paid.provider(provider)
        ids = [m.ctx.source.id for m in chosen]
        if segment is None:
            bounds = [m.since_id for m in chosen]
            since = None if None in bounds else min(b for b in bounds if b is not None)
            text = q.since(q.packed([_config(m.ctx).handle for m in chosen]), since)
            cursor, limit, purpose = None, MAX_PAGES if since else FIRST_PAGES, "search"
        else:
            text, cursor, limit, purpose = segment.query, segment.cursor, MAX_PAGES, "backlog"
        out, seen = _Search(), set()
        below = segment.below if segment is not None else None
        for _ in range(limit):
            params = {"query": text, "type": "Latest", **({"cursor": cursor} if cursor else {})}
            try:
                answer = await call(ctx, provider, Request(
                    purpose, f"{p.base_url}/twitter/search", ids, params), _inspect)
            except HTTPStatusError as exc:
                if not cursor or exc.status not in REQUEST_REFUSED:
                    raise
                # R-X-4: the cursor is discarded; the search goes on below the oldest
                # tweet it reached, so nothing between is lost
                out.warning = (f"a backlog cursor was refused (HTTP {exc.status}) and "
                               "discarded; the search went on by max_id")
                restart = Segment(text, cursor, below).restarted()
                text, cursor = restart.query, None
                continue
            out.pages.append(answer.data)
            kept, skipped = parse_tweets(answer.data["tweets"])
            out.tweets.extend(kept)
            out.skipped.extend(skipped)
            below = min([t.id for t in kept] + ([below] if below else [])) if kept else below
            nxt = answer.data.get("next_cursor")
            if (not kept and not skipped) or not isinstance(nxt, str) or not nxt:
                return out
            if nxt in seen or nxt == cursor:
                out.warning = "the provider repeated a cursor; the search was ended there"
                return out
            seen.add(nxt)
            cursor = nxt
        if limit == MAX_PAGES and cursor:
            out.left = Segment(text, cursor, below)
        return out

    def _route(self, found: _Search, chosen: Sequence[_Member],
               members: Sequence[_Member]) -> None:
        by_handle = {m.handle: m for m in members}
        for tweet in found.tweets:
            member = by_handle.get(tweet.handle)
            if member is not None:
                member.tweets.setdefault(tweet.id, tweet)
        own = _by_author(found.pages)
        for m in chosen:
            m.pages += len(found.pages)
            if m.handle in own:
                m.raws.append({"tweets": own[m.handle]})
            m.warnings.extend(found.skipped)
            if found.warning:
                m.warnings.append(found.warning)

    async def _result(self, m: _Member, provider: str, left: Sequence[Segment]) -> ReadResult:
        ctx = m.ctx
        own = [s for s in left if m.handle in q.handles_of(s.query)]
        old = ctx.source.cursor
        dropped = int(old.get("dropped") or 0) + max(0, len(own) - MAX_SEGMENTS)
        if len(own) > MAX_SEGMENTS:
            m.warnings.append(f"{len(own) - MAX_SEGMENTS} unfinished searches dropped "
                              f"(at most {MAX_SEGMENTS} are kept)")
        if m.since_id is None and not m.tweets and not m.warnings:
            m.warnings.append(f"no tweets found for @{_config(ctx).handle}: renamed, "
                              "suspended, protected or silent? check the handle")
        items, waiting = await self._articles(m, provider)
        top = max([m.since_id or 0, *m.tweets])
        cursor = {"since_id": str(q.watermark(top, ctx.now)),
                  "segments": [{"query": s.query, "cursor": s.cursor, "below": str(s.below)}
                               for s in own[:MAX_SEGMENTS]],
                  "dropped": dropped, bodies.CURSOR_KEY: bodies.dump(waiting)}
        raw = () if not m.raws else (RawResponse(
            url=f"socialdata:search:{m.handle}", final_url="", fetched_at=ctx.now, status=200,
            headers={"content-type": "application/json"},
            body=json.dumps({"pages": m.raws}).encode()),)
        return ReadResult(items=tuple(items), cursor=cursor, raw=raw, http_status=200,
                          title=f"@{_config(ctx).handle} on X", pages=max(1, m.pages),
                          not_before=q.on_grid(ctx.now, ctx.source.interval_min),
                          warnings=tuple(dict.fromkeys(m.warnings)))

    async def _articles(self, m: _Member, provider: str
                        ) -> tuple[list[ItemData], list[bodies.Waiting]]:
        """New tweets that link a long-form article get its body from the article
        endpoint; those that cannot get it now wait in the cursor (at most 3 tries)."""
        ctx = m.ctx
        items: dict[str, ItemData] = {}
        todo: list[bodies.Waiting] = []
        for tid, tweet in sorted(m.tweets.items(), reverse=True):
            item = tweet.item
            items[str(item.key)] = item
            if "x_article" in item.raw and tid > (m.since_id or 0):
                todo.append(bodies.Waiting(item, str(tid), 0, ctx.now))
        todo += [w for w in bodies.due(bodies.load(ctx.source.cursor), ctx.now)
                 if str(w.item.key) not in {str(t.item.key) for t in todo}]
        waiting: list[bodies.Waiting] = []
        p = ctx.paid.provider(provider)
        for entry in todo:
            try:
                answer = await call(ctx, provider, Request(
                    "article", f"{p.base_url}/twitter/article/{entry.ref}", [ctx.source.id],
                    per_item=True))
            except (BudgetExhaustedError, HTTPStatusError) as exc:
                if isinstance(exc, HTTPStatusError) and exc.status in REQUEST_REFUSED:
                    continue  # the article is gone: the tweet stays as it is
                waiting.append(bodies.failed(entry) if bodies.tried(exc) else entry)
                items[str(entry.item.key)] = waiting[-1].item
                continue
            items[str(entry.item.key)] = with_article(entry.item, answer.data)
        return list(items.values()), waiting


def _config(ctx: ReadContext) -> XConfig:
    config = ctx.config
    if isinstance(config, XConfig):
        return config
    return XConfig.model_validate({"handle": ctx.source.cursor.get("handle")
                                   or ctx.source.url.rstrip("/").rsplit("/", 1)[-1]})
