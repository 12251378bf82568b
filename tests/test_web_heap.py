"""``settle_heap``: what start-up built leaves the collector's sight before serving."""

from __future__ import annotations

import gc

from tidings.web.server import settle_heap


def test_settle_heap_freezes_what_exists_and_nothing_made_later() -> None:
    early = [[n] for n in range(1000)]
    settle_heap()
    try:
        late = [[n] for n in range(10)]
        tracked = {id(o) for o in gc.get_objects()}
        assert gc.get_freeze_count() >= len(early)
        assert id(early) not in tracked and not any(id(e) in tracked for e in early)
        assert id(late) in tracked
    finally:
        gc.unfreeze()
