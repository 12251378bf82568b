"""What an entry's own page gives: read_detail (R-WEB-5)."""

from __future__ import annotations

import pytest

from tidings.extract.detail import read_detail

URL = "https://paper.example/2024/story.html"


@pytest.mark.parametrize("zero", ["0001-01-01T00:00:00+08:00", "0001-01-01T00:00:00Z"])
def test_a_zero_date_on_the_page_is_no_date(zero: str) -> None:
    page = (f'<html><head><meta property="article:published_time" content="{zero}">'
            f'<title>Story</title></head><body><time datetime="{zero}">x</time></body></html>')
    fields = read_detail(page, URL)
    assert fields.published_at is None
    assert fields.title == "Story"


def test_a_zero_date_under_the_selector_is_no_date() -> None:
    page = '<html><body><span class="d">0001-01-01T00:00:00+08:00</span></body></html>'
    assert read_detail(page, URL, date_selector=".d", date_only_by_selector=True
                       ).published_at is None


def test_a_long_cjk_description_keeps_its_text() -> None:
    description = "新华社 " + "记者报道了这件事情的经过" * 80  # one space, near the start
    page = f'<html><head><meta name="description" content="{description}"></head></html>'
    summary = read_detail(page, URL).summary
    assert summary.endswith("…")
    assert 500 < len(summary) <= 601
