"""A small synthetic web for the crawler tests: ~300 blogs on one loopback server.

Every site has a host name under ``.test`` that :class:`WebResolver` resolves
to 127.0.0.1 (and nothing else: names it does not know do not resolve, like a
host that is down). One aiohttp server answers for all of them by the Host
header, counting every request by (host, path), so a test can prove that no
page was fetched twice and that robots.txt disallows were never fetched.

The sites are written in the styles of the engines people use (WordPress,
Blogger, Ghost, Hugo, Jekyll, Hexo, Typecho, Substack-like), with the noise
of real pages: navigation, tag clouds, archives, recent posts, social rows,
footer credits, deep links to other blogs inside posts. Their blogrolls form
a known graph (``Web.expected`` walks it the way the spec says a crawl
should), and some sites misbehave: a home page that answers every path, a
redirect loop, a link farm, a huge or HTML robots.txt, an endless page, a
PNG for a home page, hosts that are down.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import dataclass, field
from html import escape

from aiohttp import web

STYLES = ("wordpress", "blogger", "ghost", "hugo", "jekyll", "hexo", "typecho", "substack")
#: where each engine serves its feed, its media type, and whether themes declare it
FEEDS = {
    "wordpress": ("/feed/", "rss"), "blogger": ("/feeds/posts/default", "atom"),
    "ghost": ("/rss/", "rss"), "hugo": ("/index.xml", "rss"), "jekyll": ("/feed.xml", "atom"),
    "hexo": ("/atom.xml", "atom"), "typecho": ("/index.php/feed/", "rss"),
    "substack": ("/feed", "rss"),
}
GENERATORS = {
    "wordpress": "WordPress 6.4.2", "blogger": "Blogger", "ghost": "Ghost 5.80",
    "hugo": "Hugo 0.124.1", "jekyll": "Jekyll v4.3.3", "hexo": "Hexo 7.1.1",
    "typecho": "Typecho 1.2.1", "substack": "Substack",
}
BAD = ("echo200", "loop", "farm", "huge-robots", "html-robots", "endless", "png", "down")
FOLLOW = 100  # what the crawler takes from one blogroll


@dataclass
class Site:
    host: str
    style: str
    kind: str = "ok"  # "ok" or one of BAD
    feed: bool = True
    declared: bool = True  # else an <a>RSS</a> in the footer, or the engine's default
    roll: list[str] = field(default_factory=list)  # hosts
    roll_on: str = "home"  # home / page / none
    robots: str = "none"  # none / allow / deny-all / deny-roll

    @property
    def feed_path(self) -> str:
        return FEEDS[self.style][0]

    @property
    def roll_path(self) -> str:
        return "/friends/" if self.style in ("hexo", "hugo", "jekyll") else "/links/"


@dataclass
class Web:
    sites: dict[str, Site]
    seeds: list[str]
    port: int = 0
    requests: Counter[tuple[str, str]] = field(default_factory=Counter)

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{self.port}{path}"

    def expected(self, max_depth: int) -> dict[str, int]:
        """Feed URL -> depth of every feed a crawl to ``max_depth`` must find (the spec's
        walk: breadth first, robots honoured, blogrolls on the home page or on the page
        the site calls Friends/Links, the first FOLLOW sites of each)."""
        depth = dict.fromkeys(self.seeds, 0)
        level = list(self.seeds)
        found: dict[str, int] = {}
        for d in range(max_depth + 1):
            nxt: list[str] = []
            for host in level:
                site = self.sites.get(host)
                if site is None or not self.readable(site):
                    continue
                if site.feed and site.kind in ("ok", "farm", "html-robots"):
                    found[self.url(host, site.feed_path)] = d
                if d == max_depth:
                    continue
                for target in self.visible_roll(site)[:FOLLOW]:
                    if target not in depth:
                        depth[target] = d + 1
                        nxt.append(target)
            level = nxt
        return found

    @staticmethod
    def robots_of(site: Site) -> str:
        """What robots.txt says, as the crawler should read it (an HTML page says nothing)."""
        return "none" if site.kind in ("html-robots", "echo200") else site.robots

    def readable(self, site: Site) -> bool:
        return site.kind not in ("down", "huge-robots", "loop", "endless", "png") and \
            self.robots_of(site) != "deny-all"

    def visible_roll(self, site: Site) -> list[str]:
        if site.kind == "farm":
            return site.roll
        if site.kind not in ("ok", "html-robots") or site.roll_on == "none":
            return []
        if site.roll_on == "page" and self.robots_of(site) == "deny-roll":
            return []
        return site.roll

    def disallowed(self) -> set[tuple[str, str]]:
        """(host, path) pairs robots.txt forbids that a careless crawler would fetch."""
        out: set[tuple[str, str]] = set()
        for site in self.sites.values():
            if self.robots_of(site) == "deny-all":
                out.add((site.host, "/"))
            if self.robots_of(site) == "deny-roll":
                out.add((site.host, site.roll_path))
        return out


def build_web(n: int = 300, seed: int = 20) -> Web:
    """``n`` sites, a few of each misbehaviour, blogrolls of 3-6 sites (fewer is none)."""
    rng = random.Random(seed)
    hosts = [f"{STYLES[i % len(STYLES)]}-{i:03d}.test" for i in range(n)]
    sites = {h: Site(h, STYLES[i % len(STYLES)]) for i, h in enumerate(hosts)}
    bad_hosts = rng.sample(hosts[3:], 2 * len(BAD))
    for i, host in enumerate(bad_hosts):
        sites[host].kind = BAD[i % len(BAD)]
    for host in hosts:
        site = sites[host]
        site.roll = rng.sample([h for h in hosts if h != host], rng.randint(3, 6))
        site.roll_on = rng.choices(["home", "page", "none"], [6, 3, 1])[0]
        site.robots = rng.choices(["none", "allow", "deny-all", "deny-roll"], [10, 6, 1, 2])[0]
        site.feed = rng.random() > 0.06
        site.declared = rng.random() > 0.2
        if site.kind == "farm":
            site.roll = [f"farm-{host[:-5]}-{k:03d}.test" for k in range(400)]
    seeds = hosts[:3]
    for host in seeds:  # seeds are well-behaved, so the walk goes somewhere
        sites[host].kind, sites[host].robots, sites[host].roll_on = "ok", "allow", "home"
    return Web(sites, seeds)


class WebResolver:
    """Resolves the web's host names to 127.0.0.1; anything else is a host that is down."""

    def __init__(self, web: Web) -> None:
        self.web = web

    async def resolve(self, host: str, port: int) -> list[str]:
        from tidings.net import ResolveError

        site = self.web.sites.get(host)
        if site is None or site.kind == "down":
            raise ResolveError(f"cannot resolve {host} (no such host)")
        return ["127.0.0.1"]


# ---------------------------------------------------------------- pages

def _post(web: Web, site: Site, k: int) -> str:
    other = site.roll[k % len(site.roll)] if site.roll else site.host
    return (f'<article class="post hentry"><h2 class="entry-title"><a href="/{2024 - k}/0{k + 1}'
            f'/post-{k}/" rel="bookmark">Notes from week {k + 7}</a></h2>'
            f'<div class="entry-content"><p>This week on {escape(site.host)}: a long walk, '
            f'a short bug hunt, and a reply to <a href="{web.url(other, "/2024/03/a-reply/")}">'
            f'a post elsewhere</a> about keeping notes in plain text files for decades.</p>'
            f'</div></article>')


def _tags(site: Site) -> str:
    words = ("python", "walks", "tea", "linux", "notes", "随笔", "photos")
    return '<div class="tagcloud">' + " ".join(
        f'<a href="/tag/{w}/" class="tag-cloud-link" style="font-size:{10 + i}pt">{w}</a>'
        for i, w in enumerate(words)) + "</div>"


def _roll_block(web: Web, site: Site) -> str:
    links = "".join(f'<li><a href="{web.url(h)}" target="_blank">{escape(h.split(".")[0])}'
                    f'</a></li>' for h in site.roll)
    titles = {"typecho": "友情链接", "blogger": "Blog List", "hexo": "友链"}
    return (f'<section class="widget widget_links"><h3 class="widget-title">'
            f'{titles.get(site.style, "Blogroll")}</h3><ul class="xoxo blogroll">{links}</ul>'
            f'</section>')


def _head(site: Site, web: Web) -> str:
    path, kind = FEEDS[site.style]
    link = ""
    if site.feed and site.declared:
        media = "application/atom+xml" if kind == "atom" else "application/rss+xml"
        link = f'<link rel="alternate" type="{media}" title="Feed" href="{path}">'
    return (f'<head><meta charset="utf-8"><title>{escape(site.host)} | a blog</title>'
            f'<meta name="generator" content="{GENERATORS[site.style]}">'
            f'<link rel="stylesheet" href="/style.css"><link rel="icon" href="/favicon.ico">'
            f'<link rel="pingback" href="/xmlrpc.php">{link}</head>')


def home_page(web: Web, site: Site) -> str:
    nav = ('<nav class="menu"><a href="/">Home</a> <a href="/about/">About</a> '
           '<a href="/archives/">Archives</a>')
    if site.roll_on == "page":
        label = "友情链接" if site.style == "typecho" else "Friends"
        nav += f' <a href="{site.roll_path}">{label}</a>'
    nav += "</nav>"
    sidebar = ('<aside id="secondary" class="widget-area"><section class="widget">'
               '<h3>Recent Posts</h3><ul><li><a href="/2024/01/post-0/">Notes</a></li>'
               '<li><a href="/2023/02/post-1/">More notes</a></li></ul></section>'
               f'<section class="widget"><h3>Tags</h3>{_tags(site)}</section>')
    if site.roll_on == "home" and site.kind in ("ok", "html-robots"):
        sidebar += _roll_block(web, site)
    if site.kind == "farm":
        sidebar += '<div class="links">' + "".join(
            f'<a href="{web.url(h)}" target="_blank">Friend {i}</a><br>'
            for i, h in enumerate(site.roll)) + "</div>"
    sidebar += "</aside>"
    rss = ""
    if site.feed and not site.declared and site.style not in ("hugo", "jekyll"):
        rss = f' <a href="{site.feed_path}">RSS</a>'
    footer = (f'<footer id="colophon"><p>&copy; 2024 {escape(site.host)}{rss} · Powered by '
              f'<a href="https://wordpress.org/">an engine</a> · <a href="https://twitter.com/me"'
              f' target="_blank">Twitter</a> <a href="https://github.com/me" target="_blank">'
              f'GitHub</a></p></footer>')
    posts = "".join(_post(web, site, k) for k in range(3))
    return (f'<!DOCTYPE html><html lang="en">{_head(site, web)}<body class="home">'
            f'<header class="site-header"><h1 class="site-title"><a href="/">{escape(site.host)}'
            f'</a></h1>{nav}</header><div id="cookie-notice" class="cookie-banner">We use one '
            f'cookie to remember that you closed this notice.</div><main id="content">{posts}'
            f'</main>{sidebar}{footer}</body></html>')


def roll_page(web: Web, site: Site) -> str:
    cards = "".join(
        f'<div class="flink-list-item"><a href="{web.url(h)}" title="{h}" target="_blank">'
        f'<img src="/img/{i}.png" alt=""><div class="flink-item-name">{escape(h.split(".")[0])}'
        f'</div><div class="flink-item-desc">A blog I read</div></a></div>'
        for i, h in enumerate(site.roll))
    return (f'<!DOCTYPE html><html>{_head(site, web)}<body><nav><a href="/">Home</a></nav>'
            f'<main><h1>Friends</h1><p>Blogs I read, in no order.</p><div class="flink-list">'
            f'{cards}</div></main><footer>&copy; 2024</footer></body></html>')


def feed_doc(web: Web, site: Site) -> tuple[str, str]:
    url = web.url(site.host)
    if FEEDS[site.style][1] == "atom":
        return (f'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
                f'<title>{site.host}</title><id>{url}</id><updated>2024-05-01T00:00:00Z</updated>'
                f'<link href="{url}"/><entry><title>Notes</title><id>{url}p/1</id>'
                f'<link href="{url}p/1"/><updated>2024-05-01T00:00:00Z</updated></entry></feed>',
                "application/atom+xml")
    return (f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
            f'<title>{site.host}</title><link>{url}</link><description>d</description>'
            f'<item><title>Notes</title><link>{url}p/1</link><guid>{url}p/1</guid></item>'
            f'</channel></rss>', "application/rss+xml")


def robots_txt(site: Site) -> str | None:
    if site.robots == "deny-all":
        return "User-agent: *\nDisallow: /private/\n\nUser-agent: tidings-crawler\nDisallow: /\n"
    if site.robots == "deny-roll":
        return f"User-agent: *\nDisallow: {site.roll_path}\n"
    if site.robots == "allow":
        return "User-agent: *\nDisallow: /wp-admin/\nAllow: /\n"
    return None


# ---------------------------------------------------------------- the server

def web_app(the_web: Web) -> web.Application:
    async def handle(request: web.Request) -> web.StreamResponse:
        host = request.host.rsplit(":", 1)[0]
        the_web.requests[(host, request.path_qs)] += 1
        site = the_web.sites.get(host)
        if site is None:
            raise web.HTTPNotFound()
        return await _answer(the_web, site, request)

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handle)
    return app


async def _answer(web_: Web, site: Site, request: web.Request) -> web.StreamResponse:
    path = request.path
    special = await _misbehave(web_, site, request)
    if special is not None:
        return special
    if path == "/robots.txt":
        body = robots_txt(site)
        if body is None:
            raise web.HTTPNotFound()
        return web.Response(text=body, content_type="text/plain")
    if path == "/":
        return web.Response(text=home_page(web_, site), content_type="text/html")
    if path == site.roll_path and site.roll_on == "page":
        return web.Response(text=roll_page(web_, site), content_type="text/html")
    if path == site.feed_path and site.feed:
        text, media = feed_doc(web_, site)
        return web.Response(text=text, content_type=media)
    raise web.HTTPNotFound()


async def _misbehave(web_: Web, site: Site, request: web.Request) -> web.StreamResponse | None:
    kind, path = site.kind, request.path
    if kind == "echo200":  # every path, robots.txt included, is the home page
        return web.Response(text=home_page(web_, site), content_type="text/html")
    if kind == "loop" and path != "/robots.txt":
        raise web.HTTPFound("/again" if path == "/" else "/")
    if kind == "huge-robots" and path == "/robots.txt":
        return web.Response(text="User-agent: *\n" + "Disallow: /x\n" * 60_000,
                            content_type="text/plain")
    if kind == "html-robots" and path == "/robots.txt":
        return web.Response(text="<html><body>Not here</body></html>", content_type="text/html")
    if kind == "endless" and path == "/":
        resp = web.StreamResponse(headers={"content-type": "text/html"})
        await resp.prepare(request)
        try:
            while True:
                await resp.write(b"<p>" + b"more " * 2000 + b"</p>\n")
                await asyncio.sleep(0)
        except (ConnectionError, asyncio.CancelledError):
            return resp
    if kind == "png" and path == "/":
        return web.Response(body=b"\x89PNG\r\n\x1a\n" + b"\0" * 64, content_type="image/png")
    return None
