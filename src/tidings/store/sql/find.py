"""Search: the hit columns and the ranking window both backends use."""

from __future__ import annotations

from tidings.store.sql.reading import BRIEF_COLUMNS

#: ranked search orders the newest this-many matches by relevance: bm25 over every
#: match of a common word would cost a second at a million items
RANK_WINDOW = 5000


#: a hit is a list row plus the text its snippet is cut from (the body, else the summary)
_HIT_COLUMNS = f"{BRIEF_COLUMNS}, coalesce(nullif(i.body, ''), i.summary)"
