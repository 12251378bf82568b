"""The reader's pages over real HTTP: lists, paging, folding, article, bad input, CSP."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta

import httpx
import pytest

from test_web_support import (
    ServerThread,
    Spec,
    add_items,
    add_source,
    open_archive,
    serve_web,
    write,
)
from tidings.app import Tidings
from tidings.model import BodyState, RawResponse
from tidings.settings import Settings
from tidings.web.body import render_snippet
from tidings.web.server import CSP


@dataclass
class Web:
    tid: Tidings
    client: httpx.Client
    server: ServerThread


@pytest.fixture
def web(settings: Settings) -> Iterator[Web]:
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha News")
    add_source(tid, "beta", "Beta Blog")
    add_source(tid, "gamma", "Gamma Daily")
    server = serve_web(tid, settings)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield Web(tid, client, server)
    server.stop()
    tid.close()


def rows(html: str) -> list[str]:
    """The item ids of a list page, in order."""
    return re.findall(r'<li class="row[^"]*" data-id="(\d+)"', html)


def test_today_excludes_backfill_and_old_items(web: Web) -> None:
    fresh, history, old = add_items(web.tid, [
        Spec("Fresh news"), Spec("Imported history", backfill=True, age=timedelta(hours=2)),
        Spec("Last week", age=timedelta(days=7)),
    ])
    today = web.client.get("/")
    assert today.status_code == 200
    assert rows(today.text) == [str(fresh)]
    assert rows(web.client.get("/all").text) == [str(fresh), str(history), str(old)]
    assert "No collection round yet" in today.text  # the status bar (R-UI-3) is there


def test_paging_is_keyset_and_complete(web: Web) -> None:
    names = [f"s{n}" for n in range(13)]
    for name in names:
        add_source(web.tid, name)
    specs = [Spec(f"Item number {i}", source_id=names[i % 13], age=timedelta(minutes=i))
             for i in range(130)]
    ids = add_items(web.tid, specs)
    seen: list[str] = []
    url = "/all"
    pages = 0
    while url:
        page = web.client.get(url)
        assert page.status_code == 200
        got = rows(page.text)
        assert len(got) <= 50
        seen += got
        pages += 1
        older = re.search(r'id="older" href="([^"]+)"', page.text)
        url = older.group(1).replace("&amp;", "&") if older else ""
    assert pages == 3
    assert seen == [str(i) for i in ids]  # newest first, nothing lost, nothing twice


def test_per_source_quota_folds_the_rest_into_a_more_row(web: Web) -> None:
    add_items(web.tid, [Spec(f"Busy {i}", source_id="alpha", age=timedelta(minutes=i))
                        for i in range(25)])
    add_items(web.tid, [Spec("Quiet one", source_id="beta", age=timedelta(minutes=30))])
    add_items(web.tid, [Spec(f"Old {i}", source_id="gamma", age=timedelta(days=1, minutes=i))
                        for i in range(100)])
    html = web.client.get("/all").text
    assert len(rows(html)) == 21  # 10 of alpha, beta, 10 of gamma
    assert "64 more from Gamma Daily" in html
    more = re.search(r'<li class="row more"><a href="(/source/alpha\?before=[\d.]+)">15 more from '
                     r"Alpha News", html)
    assert more, html
    rest = web.client.get(more.group(1).replace("&amp;", "&")).text
    assert len(rows(rest)) == 15  # the per-source view has no quota and starts at the cut
    older = re.search(r'id="older" href="([^"]+)"', html)
    assert older  # the page stops after two pages' worth of items: paging goes on
    page2 = web.client.get(older.group(1).replace("&amp;", "&")).text
    assert len(rows(page2)) == 10 and "16 more from Gamma Daily" in page2


def test_reprints_fold_into_the_earliest_with_plus_n(web: Web) -> None:
    original, copy1, copy2 = add_items(web.tid, [
        Spec("OpenAI releases a model", source_id="alpha", age=timedelta(hours=5)),
        Spec("OpenAI Releases a Model!", source_id="beta", age=timedelta(hours=2)),
        Spec("openai releases a model", source_id="gamma", age=timedelta(hours=1)),
    ])
    html = web.client.get("/all").text
    assert rows(html) == [str(original)]
    assert ">+2</summary>" in html
    assert f'href="/item/{copy1}"' in html and f'href="/item/{copy2}"' in html
    assert f'data-ids="{original},{copy1},{copy2}"' in html


def test_same_title_from_one_source_is_not_folded(web: Web) -> None:
    add_items(web.tid, [Spec("Weekly digest", age=timedelta(days=d)) for d in range(3)])
    assert len(rows(web.client.get("/all").text)) == 3


def test_article_page_renders_the_body_for_reading(web: Web) -> None:
    body = ("<p>Intro about 语言模型 and models.</p><table><tr><td>wide</td></tr></table>"
            '<img src="https://img.example/a.png" alt="a"><pre><code>x = 1</code></pre>')
    (item_id,) = add_items(web.tid, [Spec("大语言模型 news", body=body, author="Ada L.",
                                          url="https://alpha.example/post")])
    page = web.client.get(f"/item/{item_id}", params={"q": "语言 -nothing author:x"})
    assert page.status_code == 200
    html = page.text
    assert '<div class="table-wrap"><table>' in html
    assert 'loading="lazy" decoding="async"' in html
    assert "<h1>大<mark>语言</mark>模型 news</h1>" in html
    assert "about <mark>语言</mark>模型" in html
    assert "nothing</mark>" not in html  # negated terms are not highlighted
    assert 'href="https://alpha.example/post"' in html and "Alpha News" in html
    assert 'href="/author?name=Ada%20L."' in html


def test_author_and_source_timelines(web: Web) -> None:
    a1, _, a2 = add_items(web.tid, [Spec("One", author="Grace", source_id="alpha"),
                                    Spec("Two", author="Linus", source_id="beta",
                                         age=timedelta(hours=3)),
                                    Spec("Three", author="Grace", source_id="gamma",
                                         age=timedelta(hours=2))])
    assert rows(web.client.get("/author", params={"name": "Grace"}).text) == [str(a1), str(a2)]
    assert rows(web.client.get("/source/gamma").text) == [str(a2)]


def test_search_highlights_cjk_terms(web: Web) -> None:
    add_items(web.tid, [Spec("今天的人工智能新闻", body="<p>关于人工智能的长文。</p>"),
                        Spec("Unrelated", body="<p>nothing</p>")])
    page = web.client.get("/search", params={"q": "智能"})
    assert page.status_code == 200
    assert len(rows(page.text)) == 1
    assert "人工<mark>智能</mark>新闻" in page.text


@pytest.mark.parametrize(("snippet", "shown"), [
    ("a <mark>b</mark> &amp; c", "a <mark>b</mark> &amp; c"),
    ("<script>x()</script>&lt;b&gt;", "&lt;script&gt;x()&lt;/script&gt;&lt;b&gt;"),
    ("<mark>a</mark></mark><MARK><mark>b", "<mark>a</mark><mark>b</mark>"),
    ("<mark onclick=x>a</mark>", "&lt;mark onclick=x&gt;a"),
])
def test_search_snippets_are_escaped_again_and_keep_only_balanced_marks(
        snippet: str, shown: str) -> None:
    assert str(render_snippet(snippet)) == shown


def test_hostile_titles_and_links_are_inert(web: Web) -> None:
    (item_id,) = add_items(web.tid, [Spec(
        '<img src=x onerror=alert(1)><script>alert("t")</script>',
        url="javascript:alert(1)",
        body='<p onclick="alert(1)">x</p><a href="javascript:alert(2)">y</a><script>z()</script>',
        author='"><script>alert(3)</script>',
    )])
    for path in ("/all", f"/item/{item_id}", "/search?q=script"):
        html = web.client.get(path).text
        assert "<script>alert" not in html and "<img src=x" not in html
        assert "javascript:" not in html
        assert "onclick" not in html and "onerror=alert" not in html.replace("onerror=alert(1)&gt;",
                                                                           "")


@pytest.mark.parametrize(("path", "status"), [
    ("/item/999999", 404), ("/item/abc", 400), ("/item/-1", 400),
    ("/?before=garbage", 400), ("/all?before=-99999999999999999.1", 400),
    ("/source/nope", 404), ("/author", 400), ("/sources/nope", 404),
    ("/search?q=" + "x" * 600, 400), ("/item/1/raw/5", 404), ("/nowhere", 404),
])
def test_bad_input_gets_a_4xx_page(web: Web, path: str, status: int) -> None:
    page = web.client.get(path)
    assert page.status_code == status, page.text[:300]
    assert page.headers["content-type"].startswith("text/html")
    assert "Traceback" not in page.text


def test_bad_search_syntax_is_a_400_with_the_reason(web: Web) -> None:
    page = web.client.get("/search", params={"q": "date:2024-99-99"})
    assert page.status_code == 400
    assert 'class="error"' in page.text
    api = web.client.get("/api/v1/search", params={"q": "date:2024-99-99"})
    assert api.status_code == 400 and "date" in api.json()["detail"]


def test_every_response_carries_a_strict_csp_and_pages_have_no_inline_code(web: Web) -> None:
    (item_id,) = add_items(web.tid, [Spec("Styled", body='<p style="text-align:center">c</p>')])
    for path in ("/", f"/item/{item_id}", "/sources", "/settings", "/api/v1/items",
                 "/static/app.css", "/nowhere", "/add", "/login", "/offline"):
        response = web.client.get(path)
        assert response.headers["content-security-policy"] == CSP
        assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP
        if response.headers["content-type"].startswith("text/html"):
            assert not re.search(r"<script(?![^>]*\bsrc=)", response.text), path
            assert not re.search(r"\sstyle=", response.text), path
            assert not re.search(r"\son[a-z]+=", response.text), path
    assert 'class="ta-center"' in web.client.get(f"/item/{item_id}").text


def test_review_page_lists_unconfirmed_items_with_raw_pages(web: Web) -> None:
    ok_id, bad_id = add_items(web.tid, [
        Spec("Extracted fine"),
        Spec("Could not extract", body_state=BodyState.UNCONFIRMED, body=None,
             summary="<b>teaser</b>"),
        Spec("Summary only on purpose", body_state=BodyState.UNCONFIRMED, body=None,
             summary="teaser", raw={"summary_only": True}),
    ])[:2]
    item = web.tid.items.get(bad_id)
    page = RawResponse(
        url=item.url or "", final_url=item.url or "", fetched_at=item.discovered_at,
        status=200, headers={"content-type": "text/html"},
        body=b"<html><script>alert(1)</script>raw page</html>", item_key=item.key)
    write(web.tid, lambda unit: unit.put_raw(page))
    review = web.client.get("/review").text
    assert rows(review) == [str(bad_id)]
    assert f'href="/item/{bad_id}/raw"' in review
    listing = web.client.get(f"/item/{bad_id}/raw")
    assert listing.status_code == 200 and f'/item/{bad_id}/raw/0"' in listing.text
    raw = web.client.get(f"/item/{bad_id}/raw/0")
    assert raw.headers["content-type"].startswith("text/plain")
    assert raw.headers["content-security-policy"].startswith("sandbox")
    assert "raw page" in raw.text
    assert web.client.get(f"/item/{ok_id}/raw").status_code == 200
    assert "could not be extracted" in web.client.get(f"/item/{bad_id}").text


def test_read_star_and_mark_above_forms_need_the_csrf_token(web: Web) -> None:
    first, second = add_items(web.tid, [Spec("First"), Spec("Second", age=timedelta(hours=2))])
    page = web.client.get("/all")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert token
    ids = re.search(r'name="ids" value="([^"]+)"', page.text)
    assert ids and ids.group(1) == f"{first},{second}"
    forged = web.client.post("/mark-read", data={"ids": ids.group(1), "csrf": "nope"})
    assert forged.status_code == 403
    assert not web.tid.items.get(first).read
    done = web.client.post("/mark-read", data={"ids": ids.group(1), "csrf": token.group(1),
                                               "next": "/all"})
    assert done.status_code == 303 and done.headers["location"] == "/all"
    assert web.tid.items.get(first).read and web.tid.items.get(second).read
    star = web.client.post(f"/item/{first}/state",
                           data={"starred": "1", "csrf": token.group(1), "next": "//evil.example"})
    assert star.status_code == 303 and star.headers["location"] == f"/item/{first}"
    assert web.tid.items.get(first).starred
    assert rows(web.client.get("/starred").text) == [str(first)]
    assert rows(web.client.get("/unread").text) == []


def test_sources_page_shows_health_sparkline_and_validates_edits(web: Web) -> None:
    add_items(web.tid, [Spec("An item", source_id="beta")])
    page = web.client.get("/sources")
    assert page.status_code == 200
    assert page.text.count('<svg class="spark"') == 3
    detail = web.client.get("/sources/beta")
    token = re.search(r'name="csrf" value="([^"]+)"', detail.text)
    assert token
    form = {"csrf": token.group(1), "title": "Beta Blog", "url": "https://beta.example/feed.xml",
            "interval_min": "45", "priority": "0", "visibility": "editorial", "config": "{"}
    bad = web.client.post("/sources/beta", data=form)
    assert bad.status_code == 400
    assert "config: not valid JSON" in bad.text
    assert 'value="45"' in bad.text  # what was typed is kept
    bad2 = web.client.post("/sources/beta", data={**form, "config": "{}", "interval_min": "soon"})
    assert bad2.status_code == 400 and "interval_min" in bad2.text
    regex = web.client.post("/sources/beta", data={**form, "config": '{"url_allow": ["("]}'})
    assert regex.status_code == 400 and "url_allow.0" in regex.text, "checked when saved"
    good = web.client.post("/sources/beta", data={**form, "config": "{}", "title": "Beta 2",
                                                  "folder": "  Tech   blogs "})
    assert good.status_code == 303
    assert web.tid.sources.get("beta").interval_min == 45
    assert web.tid.sources.get("beta").title == "Beta 2"
    assert web.tid.sources.get("beta").folder == "Tech blogs"
    assert 'value="Tech blogs"' in web.client.get("/sources/beta").text
    web.client.post("/sources/beta", data={**form, "config": "{}", "folder": ""})
    assert web.tid.sources.get("beta").folder is None
