"""web_list rules that find nothing fail loudly, naming the rule (R-WEB-1, R-WEB-3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tidings.errors import ConfigError, ParseError
from tidings.model import SourceKind
from tidings.pipeline.config import parse_config
from tidings.readers.web import WebListConfig, parse_page

DATA = Path(__file__).parent / "data" / "web_list"
URL = "https://www.lumenlabs.ai/news"
CARDS = (DATA / "company_news_cards.html").read_text(encoding="utf-8")


def cfg(**keys: object) -> WebListConfig:
    return WebListConfig.model_validate(keys)


@pytest.mark.parametrize(("keys", "reason"), [
    ({"item": "div.post-card"}, "item selector 'div.post-card' matched nothing"),
    ({"item": "article.card", "link": "a.read-more"},
     "link selector 'a.read-more' found no link in the 5 items"),
    ({"item": "article.card", "title": "h2.headline"},
     "title selector 'h2.headline' matched nothing in the 5 items"),
    ({"item": "article.card", "date": ".card__eyebrow"},
     "date selector '.card__eyebrow': no date in a known format (first: 'Announcements')"),
    ({"item": "article.card", "summary": ".teaser"}, "summary selector '.teaser' matched"),
    ({"item": "div.filter-bar a"}, "every one was navigation, a repeat or had no title"),
    ({"link": "a.nothing-like-this"}, "link selector 'a.nothing-like-this' matched nothing"),
    ({"link": ".pagination a, .filter-bar a"}, "matched 5 links, none of them an entry"),
])
def test_a_rule_that_finds_nothing_fails_and_names_itself(keys: dict[str, object],
                                                         reason: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_page(CARDS, URL, cfg(**keys))
    assert reason in caught.value.message
    assert caught.value.message.startswith(URL) and "\n" not in caught.value.message


def test_without_rules_the_page_chrome_is_not_an_entry() -> None:
    page = CARDS.replace('<section class="news-grid', '<section hidden class="x').split(
        '<section hidden')[0] + "</main></body></html>"
    with pytest.raises(ParseError, match="none of them an entry"):
        parse_page(page, URL, cfg())


def test_some_unreadable_dates_are_a_warning_not_a_failure() -> None:
    page = CARDS.replace('datetime="2026-09-17">Sep 17, 2026', '>sometime soon')
    parsed = parse_page(page, URL, cfg(item="article.card", date="time"))
    assert parsed.warnings == ["1 dates of 'time' not understood"]
    assert [i.published_at is None for i in parsed.items] == [False, True, False, False]


def test_links_before_the_start_line_are_not_entries() -> None:
    page = """<html><body><p>Today's newsletter, sponsored by <a href="/ads/acme">Acme</a>.</p>
    <p>Read <a href="https://other.example/essay">an essay</a> first.</p>
    <h2>Stories</h2>
    <ul><li><a href="/s/one">Story one</a></li><li><a href="/s/two">Story two</a></li></ul>
    </body></html>"""
    everything = parse_page(page, "https://news.example/today", cfg())
    assert len(everything.items) == 4
    parsed = parse_page(page, "https://news.example/today", cfg(links_start_line=3))
    assert [i.url for i in parsed.items] == ["https://news.example/s/one",
                                             "https://news.example/s/two"]
    same = parse_page(page, "https://news.example/today", cfg(same_site=True))
    assert "https://other.example/essay" not in [i.url for i in same.items]


def test_a_card_link_is_read_without_its_image_and_a_clean_title_attribute_wins() -> None:
    page = """<html><body><main>
    <a href="/p/1"><img src="/a.png" alt="ALT TEXT"><span>Plain card</span></a>
    <a href="/p/2" title="Short title">Short title, followed by a whole teaser paragraph
       that goes on and on about the post</a>
    <a href="/p/3" title="A much longer attribute than the text">Tidy</a>
    </main></body></html>"""
    titles = [i.title for i in parse_page(page, "https://b.example/", cfg()).items]
    assert titles == ["Plain card", "Short title", "Tidy"]


def test_a_changelog_without_sections_fails() -> None:
    with pytest.raises(ParseError, match="changelog: no section heading with an id"):
        parse_page("<html><body><article><h2>2026-01-02</h2><p>x</p></article></body></html>",
                   "https://d.example/changelog", cfg(mode="changelog"))


@pytest.mark.parametrize(("config", "reason"), [
    ({"itme": "article"}, "unknown config key 'itme' for a web_list source; did you mean 'item'?"),
    ({"mode": "changelog", "item": "article"}, "item: not read in mode 'changelog'"),
    ({"mode": "script"}, "mode 'script' needs 'adapter'"),
    ({"item": "article[["}, "config key 'item': invalid CSS selector"),
    ({"detail": {"max_fetch": 2}}, "config key 'detail.max_fetch': unknown key; did you mean "
                                   "'max_fetches'?"),
    ({"links_start_line": "3"}, "config key 'links_start_line'"),
    ({"mode": "changelog", "provider": "jina"}, "provider: not read in mode 'changelog'"),
    ({"mode": "markdown", "item": "li"}, "item: not read in mode 'markdown' (its keys: "
                                         "links_start_line, nav_filter, provider, same_site)"),
])
def test_a_bad_config_is_refused_with_the_key_named(config: dict[str, object],
                                                    reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(SourceKind("web_list"), config)
    assert reason in caught.value.message
