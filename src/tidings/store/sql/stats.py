"""Statistics: the windows both backends count in."""

from __future__ import annotations

from datetime import timedelta

from tidings.store.sql._base import DAY_US

#: runs started within this long before the latest run start form the "last round"
ROUND_WINDOW = timedelta(minutes=10)
_DAY = DAY_US
