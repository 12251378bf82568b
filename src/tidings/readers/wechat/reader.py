"""The ``wechat`` reader: an account's posts through a Dajiala-style paid API (R-WX-1..3).

Contract (docs/readers.md): ``POST {base}/fbmain/monitor/v3/post_history`` with
``{"name": account, "key": KEY}`` lists the account's recent posts;
``POST {base}/fbmain/monitor/v3/article_detail`` with ``{"url": post, "key": KEY}``
gives one post's HTML. Both answer ``code`` (0 = ok), ``remain_money`` and
``cost_money``. mp.weixin.qq.com itself is never fetched.

What saves money here: one list call per account per 10-minute window (the
answer is kept in the cursor with its window number, so a manual collect in the
same window costs nothing), bodies only for posts new by identity key, at most
8 per run, and a failed body bought again at most 3 times.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Annotated, Any

from pydantic import Field, StrictStr

from tidings.errors import (
    AccountGoneError,
    BudgetExhaustedError,
    HTTPStatusError,
    ParseError,
    ProviderError,
    TidingsError,
)
from tidings.model import BodyState, ItemData, RawResponse, Source, SourceKind
from tidings.readers import bodies
from tidings.readers.base import CallNote, ReadContext, ReadResult
from tidings.readers.options import Provider, ReaderConfig
from tidings.readers.paid import Request, call
from tidings.readers.wechat.posts import Post, parse_posts, post_json, post_of

PROVIDER = "dajiala"
WINDOW_S = 600
FIRST_DAYS = 7
MAX_NEW = 8
MAX_SEEN = 300
CONCURRENCY = 2
LIST_PATH = "/fbmain/monitor/v3/post_history"
BODY_PATH = "/fbmain/monitor/v3/article_detail"
#: codes of a Dajiala-style answer that are the provider's, not the account's
KEY_CODES = frozenset({101, 10001, 10002})
BALANCE_CODES = frozenset({20001})
#: the account is gone, renamed or blocked
ACCOUNT_CODES = frozenset({105, 106, 107})


class WechatConfig(ReaderConfig):
    account: Annotated[StrictStr, Field(min_length=1, max_length=100, pattern=r"^[^\s/]+$")]
    provider: StrictStr = PROVIDER


def window_of(now: datetime) -> int:
    """The 10-minute window ``now`` falls in: part of the list call's receipt identity."""
    return int(now.timestamp()) // WINDOW_S


def inspect_answer(p: Provider, data: Mapping[str, Any], note: CallNote) -> None:
    code = data.get("code")
    cost = data.get("cost_money")
    if isinstance(cost, int | float):
        note.cost = float(cost)
    message = str(data.get("msg") or "")[:160]
    if code in KEY_CODES:
        raise ProviderError(p.name, f"API key {p.masked} refused (code {code}: {message})")
    if code in BALANCE_CODES:
        note.cost = 0.0
        raise ProviderError(p.name, f"balance used up (code {code}: {message})")


_GATES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary())


def _gate() -> asyncio.Semaphore:
    """At most two calls at once to the provider (its rate allows a few per second)."""
    loop = asyncio.get_running_loop()
    gate = _GATES.get(loop)
    if gate is None:
        gate = _GATES[loop] = asyncio.Semaphore(CONCURRENCY)
    return gate


@dataclass(slots=True)
class _Run:
    ctx: ReadContext
    config: WechatConfig
    items: dict[str, ItemData] = field(default_factory=dict)
    waiting: list[bodies.Waiting] = field(default_factory=list)
    raws: list[RawResponse] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    balance: float | None = None


class WechatReader:
    kind = SourceKind("wechat")
    config_model: type[ReaderConfig] = WechatConfig

    def parse_raw(self, source: Source, raw: RawResponse) -> ReadResult:
        try:
            data = json.loads(raw.body)
        except ValueError:
            raise ParseError(f"{raw.url}: archived list answer is not JSON", raw.url) from None
        entries = data.get("data") if isinstance(data, Mapping) else None
        posts, skipped = parse_posts(entries if isinstance(entries, list) else [])
        account = str(source.config.get("account") or "")
        return ReadResult(items=tuple(p.item(account) for p in posts), warnings=tuple(skipped))

    async def read(self, ctx: ReadContext) -> ReadResult:
        config = ctx.config
        assert isinstance(config, WechatConfig)
        run = _Run(ctx, config, balance=_float(ctx.source.cursor.get("balance")))
        posts, window = await self._list(run)
        seen = [str(k) for k in ctx.source.cursor.get("seen") or ()]
        fresh = [p for p in posts if p.key not in seen]
        if ctx.source.last_success_at is None:  # first check: the last 7 days only
            oldest = ctx.now - timedelta(days=FIRST_DAYS)
            history = [p for p in fresh if p.published_at is None or p.published_at < oldest]
            seen += [p.key for p in history]
            fresh = [p for p in fresh if p not in history]
        fresh.sort(key=lambda p: p.published_at or ctx.now, reverse=True)
        if len(fresh) > MAX_NEW:
            run.warnings.append(f"{len(fresh) - MAX_NEW} more new posts left for the next run")
        todo = [bodies.Waiting(p.item(config.account), p.url, 0, ctx.now)
                for p in fresh[:MAX_NEW]]
        todo += bodies.due(bodies.load(ctx.source.cursor), ctx.now)
        await asyncio.gather(*(self._body(run, entry) for entry in todo))
        seen = (seen + [p.key for p in fresh[:MAX_NEW]])[-MAX_SEEN:]
        cursor: dict[str, Any] = {
            "list": {"window": window, "posts": [post_json(p) for p in posts]},
            "seen": seen, bodies.CURSOR_KEY: bodies.dump(run.waiting)}
        if run.balance is not None:
            cursor["balance"] = run.balance
        return ReadResult(items=tuple(run.items.values()), cursor=cursor, raw=tuple(run.raws),
                          http_status=200, warnings=tuple(run.warnings),
                          pages=max(1, len(run.raws)))

    async def _list(self, run: _Run) -> tuple[list[Post], int]:
        """The account's posts: this window's stored answer, else one paid list call."""
        ctx, window = run.ctx, window_of(run.ctx.now)
        stored = ctx.source.cursor.get("list")
        if isinstance(stored, Mapping) and stored.get("window") == window:
            try:
                return [post_of(p) for p in stored.get("posts") or ()], window
            except (KeyError, TypeError, ValueError):
                pass  # a malformed stored answer: buy it again
        data = await self._post(run, f"list:{window}", LIST_PATH, {"name": run.config.account})
        code = data.get("code")
        if code in ACCOUNT_CODES:
            raise AccountGoneError(f"wechat account {run.config.account!r} cannot be read: "
                               f"{str(data.get('msg') or code)[:160]} (closed, renamed "
                               "or blocked? check the account id)")
        if code != 0:
            raise TidingsError(f"{run.config.provider}: list answered code {code}: "
                               f"{str(data.get('msg'))[:160]}")
        entries = data.get("data")
        posts, skipped = parse_posts(entries if isinstance(entries, list) else [])
        run.warnings.extend(skipped)
        return posts, window

    async def _post(self, run: _Run, purpose: str, path: str,
                    body: Mapping[str, Any]) -> Mapping[str, Any]:
        p = run.ctx.paid.provider(run.config.provider)
        async with _gate():
            answer = await call(run.ctx, p.name, Request(
                purpose, f"{p.base_url}{path}", [run.ctx.source.id],
                body={**body, "key": p.api_key}, bearer=False, per_item=purpose == "body"),
                inspect_answer)
        run.raws.append(answer.raw)
        balance = _float(answer.data.get("remain_money"))
        if balance is not None:
            run.balance = balance
        return answer.data

    async def _body(self, run: _Run, entry: bodies.Waiting) -> None:
        """One post's body bought; a passing failure leaves it waiting (R-WX-3)."""
        try:
            data = await self._post(run, "body", BODY_PATH, {"url": entry.ref})
        except (BudgetExhaustedError, HTTPStatusError) as exc:
            if isinstance(exc, HTTPStatusError) and exc.status < 500:
                run.items[str(entry.item.key)] = entry.item  # no body will ever come
                return
            waiting = bodies.failed(entry) if bodies.tried(exc) else entry
            run.waiting.append(waiting)
            if entry.tries == 0:  # stored without its body; later tries count in the cursor
                run.items[str(entry.item.key)] = waiting.item
            return
        found = data.get("data")
        html = found.get("html") if isinstance(found, Mapping) else None
        if data.get("code") == 0 and isinstance(html, str) and html.strip():
            run.items[str(entry.item.key)] = replace(
                entry.item, body=html, body_state=BodyState.OK)
        else:
            run.items[str(entry.item.key)] = entry.item


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


