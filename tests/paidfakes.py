"""Local fakes of the paid APIs the x and wechat readers speak (tests and benchmarks).

Each fake speaks its documented contract (docs/readers.md; the shapes are kept
in tests/data/paid/), reads the time from a clock the test controls (a post
exists only once the clock has passed its time), and keeps a ledger of every
call it answered, so a test can compare what was bought with what was stored.
Trouble is switched on by attributes: ``down`` (503), ``keys`` (401/code for
others), ``status`` (any status for the next calls), ``garbage`` (not JSON).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from netservers import serve
from tidings.app import Tidings
from tidings.readers.x.query import handles_of, snowflake
from tidings.settings import Settings

Clock = Callable[[], datetime]
PAGE = 20
CURSOR_TTL = timedelta(hours=6)


@dataclass
class FakeClock:
    """The time a test moves by hand; fakes and tidings read it alike."""

    at: datetime

    def now(self) -> datetime:
        return self.at

    def advance(self, minutes: float) -> None:
        self.at += timedelta(minutes=minutes)


@dataclass
class Call:
    """One answered request: when, what for, and the status given."""

    at: datetime
    path: str
    status: int
    detail: str = ""
    cursor: str = ""


@dataclass
class Tweet:
    id: int
    handle: str
    text: str
    at: datetime
    reply: bool = False
    retweet: bool = False
    article: bool = False


@dataclass
class _Trouble:
    keys: set[str] = field(default_factory=lambda: {"sk-test-0001"})
    down: bool = False
    status: int | None = None
    retry_after: str | None = None
    garbage: bool = False


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(text=json.dumps(data, ensure_ascii=False), status=status,
                        content_type="application/json", headers=headers)


@dataclass
class FakeSocialData(_Trouble):
    """``GET /twitter/search`` and ``GET /twitter/article/{id}``, Bearer key."""

    clock: Clock = lambda: datetime.now(UTC)
    tweets: list[Tweet] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    loop_cursor: bool = False
    article_fails: int = 0  # the article endpoint answers 503 this many times first
    cursor_ttl: timedelta = CURSOR_TTL
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    #: the tweets by lower-case handle and by id: a week of 500 accounts is 15,000
    #: tweets, and a search or an article must not walk them all
    _by_handle: dict[str, list[Tweet]] = field(default_factory=dict)
    _by_id: dict[int, Tweet] = field(default_factory=dict)

    def publish(self, handle: str, text: str, at: datetime, **kind: bool) -> Tweet:
        tweet = Tweet(snowflake(at) + next(self._seq) % (1 << 22), handle, text, at, **kind)
        self.tweets.append(tweet)
        self._by_handle.setdefault(handle.lower(), []).append(tweet)
        self._by_id[tweet.id] = tweet
        return tweet

    def visible(self, handles: set[str], since_id: int, max_id: int | None) -> list[Tweet]:
        now = self.clock()
        return sorted((t for h in handles for t in self._by_handle.get(h, ())
                       if t.id > since_id and t.at <= now
                       and not t.reply and (max_id is None or t.id < max_id)),
                      key=lambda t: t.id, reverse=True)

    def _refuse(self, request: web.Request) -> web.Response | None:
        if self.down:
            return web.Response(status=503, text="upstream down")
        if self.status is not None:
            headers = {"Retry-After": self.retry_after} if self.retry_after else None
            return _json({"status": "error", "message": "trouble"}, self.status, headers)
        if request.headers.get("Authorization", "").removeprefix("Bearer ") not in self.keys:
            return _json({"status": "error", "message": "Unauthorized"}, 401)
        if self.garbage:
            return web.Response(text="<html>oops</html>", content_type="text/html")
        return None

    def _record(self, request: web.Request, status: int, detail: str = "") -> None:
        self.calls.append(Call(self.clock(), request.path, status, detail,
                               request.query.get("cursor", "")))

    async def search(self, request: web.Request) -> web.Response:
        refused = self._refuse(request)
        if refused is not None:
            self._record(request, refused.status)
            return refused
        query = request.query.get("query", "")
        since = re.search(r"since_id:(\d+)", query)
        bound = re.search(r"max_id:(\d+)", query)
        max_id = int(bound.group(1)) + 1 if bound else None  # max_id is inclusive
        if cursor := request.query.get("cursor"):
            issued, _, last = cursor.partition(":")
            if self.clock() - datetime.fromtimestamp(int(issued), UTC) > self.cursor_ttl:
                self._record(request, 422, query)
                return _json({"status": "error", "message": "cursor expired"}, 422)
            max_id = min(int(last), max_id or int(last))
        found = self.visible(handles_of(query), int(since.group(1)) if since else 0, max_id)
        page = found[:PAGE]
        nxt = None
        if len(found) > PAGE or self.loop_cursor:
            nxt = cursor if self.loop_cursor and cursor else \
                f"{int(self.clock().timestamp())}:{page[-1].id}"
        self._record(request, 200, query)
        return _json({"next_cursor": nxt, "tweets": [tweet_json(t) for t in page]})

    async def article(self, request: web.Request) -> web.Response:
        refused = self._refuse(request)
        if refused is not None:
            self._record(request, refused.status)
            return refused
        tid = int(request.match_info["id"])
        if self.article_fails > 0:
            self.article_fails -= 1
            self._record(request, 503, str(tid))
            return web.Response(status=503, text="busy")
        tweet = self._by_id.get(tid)
        tweet = tweet if tweet is not None and tweet.article else None
        self._record(request, 200 if tweet else 404, str(tid))
        if tweet is None:
            return _json({"status": "error", "message": "Not found"}, 404)
        return _json({**tweet_json(tweet), "article": {
            "title": f"Article by {tweet.handle}", "preview_text": tweet.text,
            "cover_url": "https://pbs.twimg.com/media/cover.jpg",
            "content_state": {"blocks": [
                {"key": "a", "text": "Heading", "type": "header-one",
                 "inlineStyleRanges": [], "entityRanges": []},
                {"key": "b", "text": f"Body of {tweet.text}", "type": "unstyled",
                 "inlineStyleRanges": [{"offset": 0, "length": 4, "style": "BOLD"}],
                 "entityRanges": []}], "entityMap": {}}}})

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/twitter/search", self.search)
        app.router.add_get("/twitter/article/{id}", self.article)
        return app


def tweet_json(t: Tweet) -> dict[str, Any]:
    """A tweet in SocialData's shape (the fields the reader relies on)."""
    urls = [{"url": "https://t.co/art1", "expanded_url": f"https://x.com/i/article/{t.id}",
             "display_url": "x.com/i/article/…"}] if t.article else []
    text = "https://t.co/art1" if t.article else t.text
    return {
        "tweet_created_at": t.at.strftime("%Y-%m-%dT%H:%M:%S.000000Z"),
        "id": t.id, "id_str": str(t.id), "text": None,
        "full_text": ("RT @someone: " + text) if t.retweet else text,
        "truncated": False, "in_reply_to_status_id_str": None,
        "user": {"id_str": str(abs(hash(t.handle)) % 10**9), "name": t.handle.title(),
                 "screen_name": t.handle},
        "quoted_status": None, "retweeted_status": {"id_str": "1"} if t.retweet else None,
        "quote_count": 0, "reply_count": 1, "retweet_count": 2, "favorite_count": 3,
        "views_count": 40, "bookmark_count": 0, "lang": "en",
        "entities": {"urls": urls, "hashtags": [], "user_mentions": []},
    }


@dataclass
class Post:
    account: str
    n: int
    title: str
    at: datetime
    body_fails: int = 0  # the body call answers 503 this many times first

    @property
    def url(self) -> str:
        return (f"https://mp.weixin.qq.com/s?__biz={self.account}&mid={self.n}&idx=1"
                "&sn=abc&chksm=track")


@dataclass
class FakeDajiala(_Trouble):
    """``POST /fbmain/monitor/v3/post_history`` and ``.../article_detail``, key in the body."""

    clock: Clock = lambda: datetime.now(UTC)
    posts: list[Post] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    money: float = 1000.0
    list_price: float = 0.14
    body_price: float = 0.03
    gone: set[str] = field(default_factory=set)
    delay: float = 0.0  # seconds each answer takes (to see how many run at once)
    body_status: int | None = None  # every body call answers this (429: with retry_after)
    in_flight: int = 0
    most_at_once: int = 0
    _by_account: dict[str, list[Post]] = field(default_factory=dict)
    _by_url: dict[str, Post] = field(default_factory=dict)

    def publish(self, account: str, title: str, at: datetime, **extra: int) -> Post:
        post = Post(account, len(self.posts) + 1, title, at, **extra)
        self.posts.append(post)
        self._by_account.setdefault(account, []).append(post)
        self._by_url.setdefault(post.url, post)
        return post

    async def _body(self, request: web.Request) -> tuple[dict[str, Any], web.Response | None]:
        self.in_flight += 1
        self.most_at_once = max(self.most_at_once, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        try:
            body = await request.json()
        except ValueError:
            return {}, _json({"code": 400, "msg": "bad request"}, 400)
        if self.down:
            return body, web.Response(status=503, text="down")
        if self.status is not None:
            headers = {"Retry-After": self.retry_after} if self.retry_after else None
            return body, web.Response(status=self.status, text="trouble", headers=headers)
        if self.garbage:
            return body, web.Response(text="{not json", content_type="application/json")
        if body.get("key") not in self.keys:
            return body, _json({"code": 10002, "msg": "key 错误"})
        return body, None

    def _charge(self, price: float) -> dict[str, Any] | None:
        if self.money < price:
            return {"code": 20001, "msg": "余额不足", "remain_money": self.money}
        self.money = round(self.money - price, 4)
        return None

    async def post_history(self, request: web.Request) -> web.Response:
        body, refused = await self._body(request)
        account = str(body.get("name", ""))
        if refused is not None:
            self.calls.append(Call(self.clock(), request.path, refused.status, account))
            return refused
        self.calls.append(Call(self.clock(), request.path, 200, account))
        if account in self.gone:
            return _json({"code": 105, "msg": "该公众号已迁移或被封禁", "cost_money": 0})
        broke = self._charge(self.list_price)
        if broke:
            return _json(broke)
        now = self.clock()
        mine = sorted((p for p in self._by_account.get(account, ()) if p.at <= now),
                      key=lambda p: p.at, reverse=True)[:10]
        return _json({"code": 0, "msg": "success", "cost_money": self.list_price,
                      "remain_money": self.money, "mp_nickname": account, "data": [
                          {"title": p.title, "url": p.url, "post_time": int(p.at.timestamp()),
                           "post_time_str": p.at.strftime("%Y-%m-%d %H:%M:%S"),
                           "digest": f"digest of {p.title}", "position": 1, "original": 1,
                           "cover_url": "https://mmbiz.qpic.cn/cover.jpg", "is_deleted": 0}
                          for p in mine]})

    async def article_detail(self, request: web.Request) -> web.Response:
        body, refused = await self._body(request)
        url = str(body.get("url", ""))
        if refused is not None:
            self.calls.append(Call(self.clock(), request.path, refused.status, url))
            return refused
        if self.body_status is not None:
            self.calls.append(Call(self.clock(), request.path, self.body_status, url))
            headers = {"Retry-After": self.retry_after} if self.retry_after else None
            return web.Response(status=self.body_status, text="slow down", headers=headers)
        post = self._by_url.get(url)
        if post is not None and post.body_fails > 0:
            post.body_fails -= 1
            self.calls.append(Call(self.clock(), request.path, 503, url))
            return web.Response(status=503, text="busy")
        self.calls.append(Call(self.clock(), request.path, 200, url))
        if post is None:
            return _json({"code": 404, "msg": "文章不存在", "cost_money": 0})
        broke = self._charge(self.body_price)
        if broke:
            return _json(broke)
        return _json({"code": 0, "msg": "success", "cost_money": self.body_price,
                      "remain_money": self.money,
                      "data": {"title": post.title, "author": post.account,
                               "html": f"<p>全文：{post.title}</p>"}})

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/fbmain/monitor/v3/post_history", self.post_history)
        app.router.add_post("/fbmain/monitor/v3/article_detail", self.article_detail)
        return app


class _Fake:
    def app(self) -> web.Application: ...


@asynccontextmanager
async def tidings_on(settings: Settings, fake: _Fake | FakeSocialData | FakeDajiala,
                     clock: FakeClock, provider: str, table: Mapping[str, Any]
                     ) -> AsyncIterator[Tidings]:
    """An archive whose ``provider`` is ``fake``, served on 127.0.0.1, on the test's clock."""
    async with serve(fake.app()) as base:
        providers = {provider: {"base_url": base, "api_key": "sk-test-0001", **table}}
        t = Tidings.open(replace(settings, providers=providers), create=True, clock=clock.now)
        try:
            yield t
        finally:
            await t.aclose()
