"""R-EXTRACT-1 on pages written for the purpose (tests/data/extract/)."""

from __future__ import annotations

from pathlib import Path

import lxml.html
import pytest

from tidings.errors import ConfigError, ParseError
from tidings.extract import body_text, extract_article
from tidings.extract.blocks import weighted_len
from tidings.extract.clean import clean_tree
from tidings.extract.density import density_extract
from tidings.model import BodyState

DATA = Path(__file__).parent / "data" / "extract"
URL = "https://site.example/news/page.html"


def _page(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def _density_text(name: str) -> str:
    root = lxml.html.document_fromstring(_page(name))
    clean_tree(root)
    return "\n".join(b.text for b in density_extract(root).blocks)


def test_short_chinese_article_is_ok() -> None:
    result = extract_article(_page("zh_short.html"), URL)
    assert result.state is BodyState.OK
    assert 250 < len(result.text) < 600
    assert result.text.startswith("从下周一开始")
    assert "读书分享会" in result.text
    assert "版权所有" not in result.text
    assert "首页" not in result.text


def test_density_scorer_alone_keeps_the_chinese_article() -> None:
    text = _density_text("zh_short.html")
    assert "从下周一开始" in text
    assert "读书分享会" in text
    assert "首页" not in text


def test_cjk_characters_weigh_more_than_latin() -> None:
    assert weighted_len("图书馆") == 9.0
    assert weighted_len("abc") == 3.0


@pytest.mark.parametrize("use_density_only", [False, True])
def test_comment_section_longer_than_article_is_not_the_body(use_density_only: bool) -> None:
    page = "comments.html"
    text = _density_text(page) if use_density_only else extract_article(_page(page), URL).text
    assert "harbor bridge reopened" in text
    assert "bike lane on the south side" in text
    assert "About time!" not in text
    assert "crews did a great job" not in text


def test_list_page_is_unconfirmed() -> None:
    assert extract_article(_page("list_page.html"), URL).state is BodyState.UNCONFIRMED


def test_link_page_is_unconfirmed() -> None:
    assert extract_article(_page("links_page.html"), URL).state is BodyState.UNCONFIRMED


@pytest.mark.parametrize("use_density_only", [False, True])
def test_article_split_into_sibling_divs_is_kept_whole(use_density_only: bool) -> None:
    page = "split_article.html"
    text = _density_text(page) if use_density_only else extract_article(_page(page), URL).text
    assert text.count("\n") >= 9
    assert text.index("The old mill") < 40  # at most the headline before it
    assert "arranged by telephone" in text
    assert "Sponsored" not in text
    assert "sourdough" not in text


def test_html_is_sanitized_and_absolute() -> None:
    page = _page("split_article.html").replace(
        "<p>The old mill", '<p onclick="steal()">The old mill <img src="/img/mill.jpg">'
    )
    result = extract_article(page, URL)
    assert "onclick" not in result.html
    assert 'src="https://site.example/img/mill.jpg"' in result.html
    assert result.lead_image == "https://site.example/img/mill.jpg"


def test_body_selector_override() -> None:
    result = extract_article(
        _page("comments.html"), URL, body_selector="#comments", remove_selectors=["h3"]
    )
    assert result.method == "selector"
    assert "About time!" in result.text
    assert "42 comments" not in result.text
    assert "harbor bridge reopened" not in result.text


def test_remove_selectors_apply_before_extraction() -> None:
    result = extract_article(_page("split_article.html"), URL, remove_selectors=[".para-group"])
    assert "old mill" not in result.text
    assert result.state is BodyState.UNCONFIRMED


def test_bad_selector_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="invalid CSS selector"):
        extract_article(_page("comments.html"), URL, body_selector="div[[")


def test_empty_page_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        extract_article("  ", URL)
    assert body_text("", URL) == ""


def test_body_text_matches_extract_article() -> None:
    page = _page("comments.html")
    assert body_text(page, URL) == extract_article(page, URL).text
