"""Bad input never glues unrelated stories (R-DEDUP-12): stop lists and minimum content."""

from __future__ import annotations

from tidings.identity.shingles import story_shingles, story_text
from tidings.identity.storyindex import StoryIndex, StoryItem, item_of

HOUR = 3_600_000_000


def item(n: int, source: str, title: str, lead: str = "", at: int = 0) -> StoryItem:
    sh = story_shingles(story_text(title, lead, None))
    return item_of(n, source, at, sh)


def placed_alone(*items: StoryItem) -> bool:
    index = StoryIndex()
    return all(index.place(x).cluster_id == x.item_id for x in items)


def test_cjk_is_cut_in_character_pairs_and_english_in_stemmed_words() -> None:
    sh = story_shingles(story_text("OpenAI发布GPT-5：所有用户免费", "Releases the models", None))
    assert {"发布", "用户", "免费", "openai", "gpt-5", "releas", "model"} <= sh.all
    assert "the" not in sh.all


def test_empty_and_site_name_titles_are_no_story() -> None:
    for title in ("", "Home", "News", " 首页 ", "Latest News!"):
        assert story_text(title, "", None).title == ""
    assert placed_alone(item(1, "a", "Home"), item(2, "b", "Home"), item(3, "c", "News"))


def test_boilerplate_leads_are_dropped() -> None:
    text = story_text("x", "Subscribe to our newsletter. Click here to read more.", None)
    assert text.lead == ""
    lead = "Subscribe to our newsletter for the latest news and updates from around the world."
    assert placed_alone(item(1, "a", "Dogs", lead), item(2, "b", "Cats", lead))


def test_very_short_items_stand_alone() -> None:
    assert story_shingles(story_text("wow", "ok", None)).all == frozenset()
    assert placed_alone(item(1, "a", "wow", "ok"), item(2, "b", "wow!", "ok!"))


def test_a_source_template_does_not_glue_its_items() -> None:
    template = "Posted by the Example Gazette newsroom staff reporters desk"
    items = [item(i, "gazette", f"{topic} {template}", at=i * HOUR) for i, topic in
             enumerate(["Budget vote", "Harbour fire", "School opens", "Derby result",
                        "Bridge closed", "Storm warning"], start=1)]
    assert placed_alone(*items)


def test_another_sources_copy_of_a_story_joins_it() -> None:
    index = StoryIndex()
    a = index.place(item(1, "a", "Rust 1.85 released with the Rust 2024 edition",
                         "The Rust team released Rust 1.85 which stabilizes the 2024 edition "
                         "and async closures."))
    b = index.place(item(2, "b", "Rust 1.85 stabilizes the Rust 2024 edition",
                         "Rust 1.85 is out, stabilizing the Rust 2024 edition and async "
                         "closures.", at=HOUR))
    assert b.cluster_id == a.cluster_id == 1 and b.matched == 1 and b.similarity > 0.25


def test_the_window_is_72_hours() -> None:
    index = StoryIndex()
    text = ("Rust 1.85 released with the Rust 2024 edition",
            "The Rust team released Rust 1.85 which stabilizes the 2024 edition.")
    index.place(item(1, "a", *text))
    late = index.place(item(2, "b", *text, at=73 * HOUR))
    assert late.cluster_id == 2


def test_split_items_never_join_again() -> None:
    index = StoryIndex()
    text = ("Rust 1.85 released with the Rust 2024 edition",
            "The Rust team released Rust 1.85 which stabilizes the 2024 edition.")
    index.place(item(1, "a", *text))
    assert index.place(item(2, "b", *text), apart={1}).cluster_id == 2
    assert index.place(item(3, "c", "Unrelated cooking notes", "Bake bread slowly at home "
                            "with rye flour and patience."), together={1}).cluster_id == 1
