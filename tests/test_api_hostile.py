"""Hostile markup never reaches a feed reader live (issue 29, item 1).

A hostile publisher's feed is *collected* (payloads in titles, descriptions,
descriptions escaped twice so the payload is the summary's plain text, authors,
categories, links), and a summary-only source stores the payloads as plain-text
summaries with no body. Then every output a client reads is fetched over HTTP
and parsed as that client would: Atom by its ``type`` attributes, JSON Feed by
its fields, Google Reader and Fever with their HTML fields as HTML and their
titles as HTML too (clients render them so), Miniflux's content as HTML, every
link as a link. The
detector (``live_markup``) is html5lib, a browser's parser. Pass: 0 live parts
in every output; the control: the detector finds the payloads live when they
are fed to it raw.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any
from xml.sax.saxutils import escape

import feedparser
import httpx
import jsonschema
import pytest
from aiohttp import web
from lxml import etree

from farm import serve_app
from live_markup import bad_url, live_parts
from test_browser_reader import HOSTILE_URLS, XSS
from test_greader import Client
from test_web_feeds_out import SCHEMA
from test_web_support import Spec, add_items, add_source, open_archive, run, serve_web
from tidings.app import ItemQuery, SourceUpdate, Tidings
from tidings.settings import load_settings
from tidings.web import auth

ATOM = "{http://www.w3.org/2005/Atom}"
TEXT_CONSTRUCTS = {"title", "subtitle", "summary", "content", "rights"}
#: entity tricks: text that a client decoding entities once more would turn into markup
ENTITY_TRICKS = ["&lt;script&gt;alert('ent1')&lt;/script&gt;",
                 "&amp;lt;img src=x onerror=alert('ent2')&amp;gt;",
                 "&#60;svg onload=alert('ent3')&#62;"]
PAYLOADS = [*XSS, *HOSTILE_URLS, *ENTITY_TRICKS]


def _feed(base: str) -> bytes:
    items = []
    for n, p in enumerate(PAYLOADS):
        link = escape(p) if p in HOSTILE_URLS else f"{base}/story/{n}"
        items.append(
            f"<item><title>{escape(p)}</title><link>{link}</link><guid>{base}/g/{n}</guid>"
            f"<author>{escape(p)}</author><category>{escape(p)}</category>"
            f"<description>{escape('<p>Body</p>' + p)}</description></item>"
            # the payload escaped twice: the body shows it as text, the summary *is* it
            f"<item><title>Twice {n}</title><link>{base}/twice/{n}</link>"
            f"<guid>{base}/t/{n}</guid><description>{escape(escape(p))}</description></item>")
    return (f"<?xml version='1.0' encoding='utf-8'?><rss version='2.0'><channel>"
            f"<title>{escape(PAYLOADS[0])}Evil</title><link>{base}/</link>{''.join(items)}"
            "</channel></rss>").encode()


def _publisher() -> web.Application:
    async def feed(request: web.Request) -> web.Response:
        return web.Response(body=_feed(f"http://{request.host}"),
                            content_type="application/rss+xml")

    app = web.Application()
    app.add_routes([web.get("/feed.xml", feed)])
    return app


@dataclass
class Served:
    tid: Tidings
    url: str
    greader: Client
    fever_key: str
    ids: list[int]
    token: str


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    settings = load_settings(tmp_path_factory.mktemp("hostile") / "data", env={}, overrides={
        "allow_private_hosts": "127.0.0.1", "per_host_delay": 0,
        "initial_backfill_limit": 1000})
    with serve_app(_publisher()) as base:
        async def collect() -> None:
            t = Tidings.open(settings, create=True)
            await t.sources.create(f"{base}/feed.xml", source_id="evil")
            await t.collection.round()
            await t.aclose()

        asyncio.run(collect())
    tid = open_archive(settings)
    add_source(tid, "quiet", "Quiet")
    run(lambda: tid.sources.update("quiet", SourceUpdate(folder="Quiet")))
    add_items(tid, [Spec(p, source_id="quiet", body=None, summary=p, author=p,
                         url=p if p in HOSTILE_URLS else None) for p in PAYLOADS])
    token_id, value, digest = auth.new_token()
    run(lambda: tid.tokens.add(token_id, "client", digest))
    run(lambda: tid.compat.remember_fever_key(token_id, value))
    server = serve_web(tid, replace(settings, public_reading=True))
    ids = [i.id for i in tid.items.query(ItemQuery(limit=1000))]
    client = Client(server, value)
    yield Served(tid, server.url, client, hashlib.md5(f"admin:{value}".encode()).hexdigest(),
                 ids, value)
    client.http.close()
    server.stop()
    tid.close()


# ------------------------------------------------------------ reading as a client


def atom_live(body: bytes) -> list[str]:
    """Live parts of an Atom document read by its rules: text constructs by their
    ``type`` (text is text, html is parsed), every ``href`` as a link."""
    parsed = feedparser.parse(body)
    assert not parsed.bozo, parsed.get("bozo_exception")
    found: list[str] = []
    for element in etree.fromstring(body).iter():
        if bad_url(element.get("href") or ""):
            found.append(f"href={element.get('href')}")
        name = str(element.tag).removeprefix(ATOM)
        if name in TEXT_CONSTRUCTS and element.get("type") == "html":
            found += live_parts(element.text or "")
        elif name in TEXT_CONSTRUCTS and element.get("type") == "xhtml":
            found += live_parts(etree.tostring(element, encoding="unicode"))
    return found


def json_feed_live(doc: dict[str, Any]) -> list[str]:
    jsonschema.validate(doc, SCHEMA)
    found: list[str] = []
    for item in doc["items"]:
        found += live_parts(item.get("content_html") or "")
        found += [f"url={item[k]}" for k in ("url", "external_url", "image")
                  if bad_url(item.get(k) or "")]
    return found


def greader_live(doc: dict[str, Any]) -> list[str]:
    """Google Reader items: ``summary``/``content`` are HTML; titles, authors and
    origins are read as HTML too (several clients render them so)."""
    found: list[str] = []
    for item in doc.get("items", []):
        for field in ("summary", "content"):
            found += live_parts((item.get(field) or {}).get("content") or "")
        for text in (item.get("title"), item.get("author"), item["origin"].get("title")):
            found += live_parts(text or "")
        found += [f"href={link['href']}" for link in item["canonical"] + item["alternate"]
                  if bad_url(link["href"])]
        found += [f"htmlUrl={item['origin']['htmlUrl']}"] if bad_url(
            item["origin"].get("htmlUrl") or "") else []
    for sub in doc.get("subscriptions", []):
        found += live_parts(sub["title"]) + [x for c in sub["categories"]
                                            for x in live_parts(c["label"])]
        found += [f"htmlUrl={sub['htmlUrl']}"] if bad_url(sub["htmlUrl"]) else []
    return found


def miniflux_live(doc: dict[str, Any]) -> list[str]:
    """Miniflux entries: ``content`` is HTML; titles are text there (Miniflux itself
    sends them unescaped), links are links."""
    found: list[str] = []
    for entry in doc["entries"]:
        found += live_parts(entry["content"])
        found += [f"url={entry['url']}"] if bad_url(entry["url"]) else []
        found += [f"site_url={entry['feed']['site_url']}"] if bad_url(
            entry["feed"]["site_url"]) else []
    return found


def fever_live(doc: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for item in doc.get("items", []):
        found += live_parts(item["html"]) + live_parts(item["title"]) + live_parts(
            item["author"])
        found += [f"url={item['url']}"] if bad_url(item["url"]) else []
    for feed in doc.get("feeds", []) + doc.get("groups", []):
        found += live_parts(feed["title"])
        found += [f"site_url={feed['site_url']}"] if bad_url(feed.get("site_url", "")) else []
    return found


# ------------------------------------------------------------------ the outputs


def _outputs(s: Served) -> dict[str, list[str]]:
    plain = httpx.Client(base_url=s.url, timeout=60)
    out: dict[str, list[str]] = {}
    for path in ("/feeds/all.atom?limit=200", "/feeds/source/evil.atom?limit=200",
                 "/feeds/source/quiet.atom", "/feeds/folder/Quiet.atom"):
        out[path] = atom_live(plain.get(path).raise_for_status().content)
    for path in ("/feeds/all.json?limit=200", "/feeds/source/quiet.json"):
        out[path] = json_feed_live(plain.get(path).raise_for_status().json())
    gr = s.greader
    reading = "user/-/state/com.google/reading-list"
    out["greader stream/contents"] = greader_live(gr.get("/stream/contents/" + reading,
                                                         n=1000))
    out["greader stream/contents feed"] = greader_live(gr.get("/stream/contents/feed/quiet"))
    answer = gr.http.post("/api/greader/reader/api/0/stream/items/contents",
                          data={"i": [str(i) for i in s.ids]})
    out["greader items/contents"] = greader_live(answer.raise_for_status().json())
    out["greader subscription/list"] = greader_live(gr.get("/subscription/list"))
    for stream in (reading, "feed/quiet", "user/-/label/Quiet"):
        atom = gr.http.get(f"/api/greader/reader/atom/{stream}", params={"n": 1000})
        out[f"greader atom {stream}"] = atom_live(atom.raise_for_status().content)
    out["fever items"] = fever_live(_fever_pages(s))
    ids = ",".join(str(i) for i in s.ids[:50])
    out["fever with_ids"] = fever_live(_fever(s, f"items&with_ids={ids}"))
    out["fever feeds"] = fever_live(_fever(s, "feeds&groups"))
    mini = plain.get("/v1/entries", params={"limit": 1000},
                     headers={"X-Auth-Token": s.token}).raise_for_status().json()
    out["miniflux entries"] = miniflux_live(mini)
    plain.close()
    return out


def _fever(s: Served, query: str) -> dict[str, Any]:
    answer = httpx.post(f"{s.url}/api/fever?api&{query}", data={"api_key": s.fever_key})
    body: dict[str, Any] = answer.raise_for_status().json()
    return body


def _fever_pages(s: Served) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    since = 0
    while page := _fever(s, f"items&since_id={since}")["items"]:
        items += page
        since = max(i["id"] for i in page)
    return {"items": items}


def test_the_detector_sees_the_payloads_live_when_fed_them_raw() -> None:
    dead = [p for p in XSS if not live_parts(p)]
    # a tag named "scr<script", an IE-only backtick attribute, plain broken markup: a
    # browser runs none of them either
    assert dead == [XSS[-5], XSS[-4], XSS[-1]]
    assert all(bad_url(u) for u in HOSTILE_URLS)
    # the old Atom: a plain-text summary labelled html is live in the consumer
    old = (b'<feed xmlns="http://www.w3.org/2005/Atom"><id>x</id><title>t</title>'
           b'<updated>2026-01-01T00:00:00Z</updated><entry><id>y</id><title>t</title>'
           b'<updated>2026-01-01T00:00:00Z</updated><summary type="html">'
           + escape(XSS[1]).encode() + b"</summary></entry></feed>")
    assert atom_live(old) == ["img@onerror"]


def test_no_output_hands_a_client_anything_live(served: Served) -> None:
    outputs = _outputs(served)
    live = {name: found for name, found in outputs.items() if found}
    assert live == {}, {name: len(found) for name, found in live.items()}
    assert len(outputs) == 17
    print(f"hostile outputs: {len(PAYLOADS)} payloads x {len(outputs)} outputs, "
          f"{len(served.ids)} items, 0 live parts")


def test_the_payloads_arrive_as_text(served: Served) -> None:
    """Not lost either: a summary that held markup characters is shown as those
    characters (escaped HTML, or text in Atom), and titles keep their words."""
    doc = served.greader.get("/stream/contents/feed/quiet", n=100)
    summaries = {item["summary"]["content"] for item in doc["items"]}
    assert "&lt;script&gt;alert(&#x27;s&#x27;)&lt;/script&gt;" in summaries
    titles = {item["title"] for item in doc["items"]}
    assert "\uff1cscript\uff1ealert('s')\uff1c/script\uff1e" in titles
    atom = feedparser.parse(httpx.get(served.url + "/feeds/source/quiet.atom").content)
    assert any(e.summary == XSS[0] and e.summary_detail.type == "text/plain"
               for e in atom.entries)
