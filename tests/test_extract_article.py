"""R-EXTRACT-1 on pages written for the purpose (tests/data/extract/)."""

from __future__ import annotations

from pathlib import Path

import lxml.html
import pytest

from tidings.errors import ConfigError, ParseError
from tidings.extract import body_text, extract_article
from tidings.extract.blocks import iter_blocks, weighted_len
from tidings.extract.clean import clean_tree
from tidings.extract.combine import Arbitration, Candidate, arbitrate
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


@pytest.mark.parametrize("use_density_only", [False, True])
def test_teaser_cards_after_the_article_are_not_the_body(use_density_only: bool) -> None:
    # Eight cards (image link, linked headline, byline, blurb) and eight flat
    # briefs hold more punctuated text than the article; neither class name
    # says "related", so only their repeated card structure gives them away.
    page = "teaser_cards.html"
    text = _density_text(page) if use_density_only else extract_article(_page(page), URL).text
    assert "disused rail yard" in text
    assert "tested for oil and coal dust" in text
    assert "small ferry across the harbour" not in text
    assert "Harbour ferry returns" not in text
    assert "Staff Reporter" not in text


def test_flat_briefs_led_by_a_link_are_teasers() -> None:
    page = _page("teaser_cards.html")
    page = page[: page.index('<div class="grid">')] + page[page.index('<ul class="briefs">') :]
    root = lxml.html.document_fromstring(page)
    clean_tree(root)
    text = "\n".join(b.text for b in density_extract(root).blocks)
    assert "disused rail yard" in text
    assert "small ferry across the harbour" not in text


def test_block_inside_a_link_is_link_text() -> None:
    root = lxml.html.fragment_fromstring(
        '<div><a href="/x"><div>A whole headline wrapped in a link</div></a>'
        "<p>Plain words.</p></div>"
    )
    blocks = {b.text: b for b in iter_blocks(root)}
    assert blocks["A whole headline wrapped in a link"].link_density == 1.0
    assert blocks["Plain words."].link_density == 0.0


_PARTS = [
    "The council met on Monday to discuss the river bank, and the chair opened by reading "
    "letters from residents who had watched the water rise past the footpath twice this year.",
    "Engineers from the regional authority then presented three options, the cheapest being "
    "a low wall, the dearest a set of floodable meadows that would double as a park in summer.",
    "Several members asked who would pay for upkeep, since the last scheme of this kind had "
    "been left to decay once the grant ran out and nobody had budgeted for repairs.",
    "A farmer whose fields border the river spoke against the meadows, saying that his family "
    "had drained that land by hand and that flooding it again would end his dairy herd.",
    "After two hours the council voted to commission a fuller study, due in the spring, and "
    "to hold a second public meeting once its authors have walked the bank with residents.",
    "Until then the footpath stays closed at the weir, and the ferry will run an extra crossing "
    "at dusk for people who used the path to walk home from the station after work.",
]
_PARTS = [
    f"{part} Paragraph {n} ends here, as long as a real one." for n, part in enumerate(_PARTS)
]


def _arbitrate(recall: str, precision: str, density: str) -> Arbitration | None:
    return arbitrate(
        Candidate("trafilatura-recall", recall),
        Candidate("trafilatura-precision", precision),
        Candidate("density", density),
    )


def test_density_output_judges_between_the_trafilatura_modes() -> None:
    article = "\n".join(_PARTS[:3])
    boiler = "Subscribe to our newsletter for the best stories of the week, every week"
    chosen = _arbitrate(article + "\n" + boiler, article, article)
    assert chosen is not None
    assert chosen.method == "trafilatura-precision"
    chosen = _arbitrate(article, "", article + "\nShare this article with your friends today")
    assert chosen is not None and chosen.method == "trafilatura-recall"


def test_density_output_extends_a_multi_part_article() -> None:
    first, rest = _PARTS[0], _PARTS[1:5]
    density = "\n".join([first, *rest, "More stories", "Sign up for alerts"])
    chosen = _arbitrate(first, first, density)
    assert chosen is not None and chosen.extended and chosen.method == "density"
    assert chosen.text.split("\n") == [first, *rest]


def test_short_additions_do_not_extend_the_body() -> None:
    first = "\n".join(_PARTS[:2])
    teasers = [
        f"Headline number {n} of the list of other stories, with a few words" for n in range(9)
    ]
    chosen = _arbitrate(first, first, "\n".join([first, *teasers]))
    assert chosen is not None and chosen.text == first and not chosen.extended


def test_density_subset_trims_trafilatura_boilerplate() -> None:
    article = "\n".join(_PARTS)
    tail = "Read more about council decisions and the river bank in our archive"
    chosen = _arbitrate(article + "\n" + tail, article + "\n" + tail, article)
    assert chosen is not None and chosen.method == "density" and chosen.text == article


def test_edge_lines_the_density_output_lacks_are_trimmed() -> None:
    article = "\n".join(_PARTS)
    dateline = "Posted by the newsroom on 12 March at 10:40 in Local affairs"
    about = "The Courier is an independent paper serving the valley since 1921 and online"
    teaser = (
        "Elsewhere: the regional orchestra plays the old mill on Friday, "
        "and tickets are still on sale at the door"
    )
    chosen = _arbitrate(f"{dateline}\n{article}\n{about}", "", f"{article}\n{teaser}")
    assert chosen is not None and chosen.method == "trafilatura-recall"
    assert chosen.text == article


def test_edge_trimming_never_cuts_much_of_the_text() -> None:
    # The density output found only the second half: the first half stays.
    article = "\n".join(_PARTS)
    chosen = _arbitrate(article, "", "\n".join(_PARTS[3:]))
    assert chosen is not None and chosen.text == article


@pytest.mark.parametrize("use_density_only", [False, True])
def test_next_story_loaded_below_is_not_added(use_density_only: bool) -> None:
    # Two <article>s in one stream: the second is longer, and its paragraphs
    # are long enough to pass for the rest of a multi-part article.
    page = "appended_story.html"
    text = _density_text(page) if use_density_only else extract_article(_page(page), URL).text
    assert "county fair opened on Friday" in text
    assert "fireworks display" in text
    assert "harbour board" not in text
