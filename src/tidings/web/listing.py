"""Build the rows of a list page: keyset paging, reprint folding, per-source quota.

R-UI-2: 50 rows a page, paged by ``(sort_time, id)`` (never OFFSET, so a page
costs the same deep in the archive as at the top); items sharing a title
fingerprint fold into one row showing the earliest of them with "+N"
(R-DEDUP-8); a busy source gets at most ``quota`` rows a page, and what it
loses is one "N more from X" row linking to that source, so nothing vanishes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from tidings.app import ItemQuery
from tidings.app.paging import encode_cursor, micros, sort_time
from tidings.model import ItemBrief

PAGE_SIZE = 50
DEFAULT_QUOTA = 10
MAX_GROUP = 60


@dataclass(slots=True)
class Row:
    """One line of a list: an item (with its folded reprints) or a quota overflow."""

    item: ItemBrief
    others: list[ItemBrief] = field(default_factory=list)
    more_count: int = 0  # > 0: "N more from <item's source>" overflow row
    more_cursor: str = ""
    folded: int = 0  # how many reprints are folded into this row ("+N")
    story: int = 0  # > 0: the row stands for this story cluster ("+N sources", R-DEDUP-12)
    #: every item id the row stands for, comma-separated (for scripts and forms)
    ids: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.ids = ",".join([str(self.item.id), *(str(o.id) for o in self.others)]) \
            if self.others else str(self.item.id)

    @property
    def is_more(self) -> bool:
        return self.more_count > 0


@dataclass(slots=True)
class Page:
    rows: list[Row]
    next_cursor: str | None

    @property
    def ids(self) -> str:
        """Every item id of the page's item rows, comma-separated ("mark all above")."""
        return ",".join(r.ids for r in self.rows if not r.is_more)


Fetch = Callable[[ItemQuery], list[ItemBrief]]
Groups = Callable[[Sequence[str]], Mapping[str, list[ItemBrief]]]
#: item ids -> (item id -> cluster id, cluster id -> members earliest first)
Stories = Callable[[Sequence[int]], tuple[Mapping[int, int], Mapping[int, list[ItemBrief]]]]


@dataclass(slots=True)
class _Folds:
    """What a page folds: reprint fingerprints shown, and story clusters."""

    fps: set[str] = field(default_factory=set)
    of: dict[int, int] = field(default_factory=dict)
    members: dict[int, list[ItemBrief]] = field(default_factory=dict)
    shown: set[int] = field(default_factory=set)


def build_page(
    fetch: Fetch, groups: Groups, query: ItemQuery, *, quota: int | None = DEFAULT_QUOTA,
    page_size: int = PAGE_SIZE, visible: Callable[[ItemBrief], bool] = lambda _: True,
    stories: Stories | None = None,
) -> Page:
    """Consume items newest first until ``page_size`` rows are filled.

    A page covers at most ``2 * page_size`` items, so a quota or folding never
    makes one page swallow the whole archive; the first query asks for a little
    more than a page, a second one only when folding or the quota ate rows.
    """
    rows: list[Row] = []
    folds = _Folds()
    folded = folds.fps
    per_source: dict[str, int] = {}
    overflow: dict[str, Row] = {}
    window = page_size * 2
    taken = 0
    last: ItemBrief | None = None
    more = False
    before = query.before
    for limit in (page_size + page_size // 5, window):
        want = limit - taken
        batch = fetch(replace(query, before=before, limit=want))
        group_map = groups([i.title_fp for i in batch if i.title_fp and i.title_fp not in folded])
        if stories is not None:
            of, members = stories([i.id for i in batch])
            folds.of.update(of)
            folds.members.update(members)
        for item in batch:
            last = item
            taken += 1
            _consume(item, rows, folds, per_source, overflow, group_map, quota, visible)
            if len(rows) >= page_size:
                break
        # items remain after `last`: it was not the batch's end, or the batch was full
        more = bool(batch) and (last is not batch[-1] or len(batch) == want)
        if len(rows) >= page_size or not more or last is None:
            break
        before = (sort_time(last), last.id)
    return Page(rows=rows, next_cursor=encode_cursor(last) if more and last else None)


def _consume(
    item: ItemBrief, rows: list[Row], folds: _Folds, per_source: dict[str, int],
    overflow: dict[str, Row], group_map: Mapping[str, list[ItemBrief]], quota: int | None,
    visible: Callable[[ItemBrief], bool],
) -> None:
    folded = folds.fps
    fp = item.title_fp
    cluster = folds.of.get(item.id, 0)
    if (fp and fp in folded) or cluster in folds.shown:
        return
    story = [m for m in folds.members.get(cluster, ()) if visible(m)]
    if len(story) < 2:
        cluster, story = 0, []
    group = group_map.get(fp) if fp and not story else None
    members = story or (_reprints(item, group, visible) if group else [])
    if quota is not None and per_source.get(item.source_id, 0) >= quota:
        more = overflow.get(item.source_id)
        if more is None:
            more = Row(item=item, more_cursor=_before_cursor(item))
            overflow[item.source_id] = more
            rows.append(more)
        more.more_count += 1
        return
    per_source[item.source_id] = per_source.get(item.source_id, 0) + 1
    if len(members) > 1:
        if cluster:
            folds.shown.add(cluster)
            folded.update(m.title_fp for m in members if m.title_fp)
        else:
            folded.add(fp)
        shown = members[0]
        rows.append(Row(item=shown, others=members[1:31], folded=len(members) - 1,
                        story=cluster))
    else:
        rows.append(Row(item=item))


def _reprints(item: ItemBrief, group: list[ItemBrief],
              visible: Callable[[ItemBrief], bool]) -> list[ItemBrief]:
    """The items ``item``'s row stands for, earliest first.

    A reprint is the same title from *another* source: one source repeating a title
    ("Weekly digest") is not folded, and a title shared by very many items is a
    generic one, not a story, so it is not folded either.
    """
    if len(group) < 2 or len(group) > MAX_GROUP:
        return []
    members = [m for m in group if visible(m)
               and (m.id == item.id or m.source_id != item.source_id)]
    return members if len(members) > 1 else []


def _before_cursor(item: ItemBrief) -> str:
    """A cursor that starts a listing *at* ``item`` (just after it in sort order)."""
    return f"{micros(sort_time(item))}.{item.id + 1}"
