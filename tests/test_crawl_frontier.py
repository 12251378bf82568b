"""The crawler's own view of its queue (``pipeline.crawl._Frontier``): a worker claims a
site only when storage would hand one out, breadth first, and a wrong view (another
process on the same crawl) is noticed at the first claim that contradicts it."""

from __future__ import annotations

from tidings.pipeline.crawl import _Frontier
from tidings.store.crawl import CrawlSite, SiteState


def site(depth: int) -> CrawlSite:
    return CrawlSite(id=depth, crawl_id=1, site=f"s{depth}.example", url="https://s.example/",
                     depth=depth, found_from="", link_text="", state=SiteState.VISITING)


def test_claims_follow_the_levels() -> None:
    frontier = _Frontier({0: 1})
    assert frontier.claimable() == 1
    frontier.claiming = 1  # the seed's claim under way: nothing for a second worker
    assert frontier.claimable() == 0
    frontier.claiming = 0
    frontier.stepped(None, site(0), expected=True)
    assert frontier.claimable() == 0  # nothing queued
    frontier.stepped((0, 3), site(1), expected=False)  # the seed's end queued 3
    assert frontier.claimable() == 2 and not frontier.blind
    frontier.stepped(None, site(1), expected=True)
    frontier.stepped(None, site(1), expected=True)
    assert frontier.claimable() == 0
    frontier.stepped((1, 4), None, expected=False)  # depth 1 still visited: level 2 waits
    assert frontier.claimable() == 0
    frontier.stepped((1, 0), None, expected=False)
    assert frontier.claimable() == 0
    frontier.stepped((1, 1), None, expected=False)  # the last of level 1 ended
    assert frontier.claimable() == 5 and not frontier.blind


def test_a_claim_that_contradicts_it_turns_it_blind() -> None:
    surprised = _Frontier({})
    surprised.stepped(None, site(0), expected=False)  # a site nobody here queued
    assert surprised.blind and surprised.claimable() == 1
    empty = _Frontier({0: 2})
    empty.stepped(None, None, expected=True)  # another process took them
    assert empty.blind
    ended = _Frontier({0: 1})
    ended.stepped(None, site(0), expected=True)
    ended.stepped((0, 0), None, expected=False)  # a visit's end finding nothing: no news
    assert not ended.blind and ended.claimable() == 0
