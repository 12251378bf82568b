"""Entry rules (R-SCHED-9) and the first-run / later-run limits (SPEC §5)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tidings.errors import ConfigError
from tidings.model import ItemData, SourceKind
from tidings.pipeline.collect import run_warnings
from tidings.pipeline.config import parse_config, parse_global_filters
from tidings.pipeline.filters import EntryRules, compile_rules, judge, limit_batch

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def rules(config: dict, global_filters: dict | None = None) -> EntryRules:
    """Rules as collection compiles them: the source's config checked by its schema."""
    glob = parse_global_filters(global_filters) if global_filters is not None else None
    return compile_rules(parse_config(SourceKind("rss"), config), glob)


def kept_and_dropped(items: list[ItemData], rules: EntryRules, now: datetime
                ) -> tuple[list[ItemData], int]:
    """The entries ``judge`` keeps (rewritten), and how many it drops."""
    judged = judge(items, rules, now)
    kept = [it for it in judged if it is not None]
    return kept, len(judged) - len(kept)


def item(title: str = "t", url: str = "https://a.example/x", days: float | None = 1,
         **kw: object) -> ItemData:
    when = None if days is None else NOW - timedelta(days=days)
    return ItemData(title=title, url=url, published_at=when, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(("config", "kept_titles"), [
    ({}, ["a", "sponsored b", "c"]),
    ({"filters": {"block": [{"field": "title", "pattern": "(?i)sponsored"}]}}, ["a", "c"]),
    ({"filters": {"keep": [{"field": "category", "pattern": "^AI$"}]}}, ["c"]),
    ({"filters": {"block": [{"field": "author", "pattern": "bot"}]}}, ["a", "sponsored b"]),
    ({"filters": {"block": [{"field": "content", "pattern": "casino"}]}}, ["sponsored b", "c"]),
    ({"url_allow": ["/blog/"]}, ["a"]),
    ({"filters": {"max_age_days": 3}}, ["a", "sponsored b"]),
])
def test_rules_keep_and_drop(config: dict, kept_titles: list[str]) -> None:
    entries = [
        item("a", url="https://a.example/blog/1", summary="win at casino"),
        item("sponsored b", url="https://a.example/ads/2", days=2),
        item("c", url="https://a.example/news/3", days=10, categories=("AI",), author="bot"),
    ]
    kept, dropped = kept_and_dropped(entries, rules(config), NOW)
    assert [k.title for k in kept] == kept_titles
    assert dropped == len(entries) - len(kept_titles)


def test_future_entries_dropped_only_when_asked() -> None:
    future = item("f", days=-2)
    assert kept_and_dropped([future], rules({}), NOW)[1] == 0
    assert kept_and_dropped([future], rules({"filters": {"drop_future": True}}), NOW)[1] == 1


def test_prefix_rewrite_happens_before_filters() -> None:
    rewrite = rules({"url_rewrite": [{"from": "http://old.example/", "to": "https://new.example/"}],
                     "url_allow": ["^https://new"]})
    kept, dropped = kept_and_dropped([item(url="http://old.example/p/1")], rewrite, NOW)
    assert dropped == 0 and kept[0].url == "https://new.example/p/1"


@pytest.mark.parametrize(("config", "message"), [
    ({"filters": {"block": [{"field": "colour", "pattern": "x"}]}},
     "'filters.block.0.field': Input should be 'title'"),
    ({"filters": {"block": [{"field": "title", "pattern": "(unclosed"}]}},
     "'filters.block.0.pattern': bad regular expression"),
    ({"filters": {"block": "title"}}, "'filters.block'"),
    ({"filters": {"surprise": 1}}, "'filters.surprise': unknown key"),
    ({"filters": {"max_age_days": -1}}, "'filters.max_age_days': Input should be greater"),
    ({"url_rewrite": [{"from": "a"}]}, "'url_rewrite.0.to': Field required"),
])
def test_bad_rules_are_rejected_with_the_reason(config: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        rules(config)


def test_global_rules_apply_to_every_source_on_top_of_its_own() -> None:
    entries = [item("AI news", categories=("AI",)), item("sponsored AI", categories=("AI",)),
               item("gardening", categories=("home",)), item("old AI", days=40,
                                                              categories=("AI",))]
    both = rules({"filters": {"keep": [{"field": "category", "pattern": "AI"}],
                              "max_age_days": 90}},
                 {"block": [{"field": "title", "pattern": "sponsored"}], "max_age_days": 30})
    kept, dropped = kept_and_dropped(entries, both, NOW)
    assert [k.title for k in kept] == ["AI news"] and dropped == 3
    # a keep rule at each level: an entry must pass both
    strict = rules({"filters": {"keep": [{"field": "title", "pattern": "news"}]}},
                   {"keep": [{"field": "category", "pattern": "home"}]})
    assert kept_and_dropped(entries, strict, NOW)[0] == []


def test_bad_global_rules_name_the_setting() -> None:
    with pytest.raises(ConfigError, match=r"^setting filters\.block\.0\.pattern: bad regular"):
        parse_global_filters({"block": [{"field": "title", "pattern": "("}]})


def test_first_run_keeps_30_recent_items_later_runs_60() -> None:
    entries = [item(f"n{i}", days=i * 10) for i in range(80)]  # 0 … 790 days old
    first = limit_batch(entries, first_run=True, now=NOW, first_limit=30, first_months=12,
                        later_limit=60)
    assert len(first) == 30 and first[0].title == "n0"
    assert all(e.published_at and e.published_at >= NOW - timedelta(days=360) for e in first)
    later = limit_batch(entries[::-1], first_run=False, now=NOW, first_limit=30,
                        first_months=12, later_limit=60)
    assert len(later) == 60 and later[0].title == "n0", "newest first whatever the feed order"


def test_undated_entries_keep_feed_order() -> None:
    entries = [item(f"u{i}", days=None) for i in range(5)]
    out = limit_batch(entries, first_run=True, now=NOW, first_limit=3, first_months=12,
                      later_limit=60)
    assert [e.title for e in out] == ["u0", "u1", "u2"]


def test_run_warnings_for_silent_failures() -> None:
    good = [item(f"t{i}") for i in range(10)]
    assert run_warnings(good, 0) == ()
    assert "8 of 10 entries were filtered out" in run_warnings(good, 8)
    empty = [item("", url="https://a.example/") for _ in range(4)] + good[:6]
    assert any("no title or no link" in w for w in run_warnings(empty, 0))
