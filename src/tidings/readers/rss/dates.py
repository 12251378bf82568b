"""Feed dates (R-RSS-5): RFC 822 and its real-world variants, ISO 8601, nothing.

A hand-written parser because dates are parsed for every entry of every feed
and the general parsers (dateutil) cost more than the rest of an entry. The
regular expressions cover what feeds actually send; anything else falls back to
``dateutil`` and then to ``email.utils`` before giving up with ``None``.

``CST`` is ambiguous: RFC 822 defines it as US Central (UTC-6), while Chinese
publishers mean China Standard Time (UTC+8). We read it as UTC+8 when the
caller says the feed is Chinese (``cst_china``: feed language ``zh*`` or CJK in
the date string itself), otherwise as RFC 822 says.

Zero dates (Hugo's ``0001-01-01T00:00:00Z``, Unix time 0...) are no dates and a
missing year is not completed from today: the rule of :mod:`tidings.dates`. The
raw text of such a date stays in ``published_raw``.
"""

from __future__ import annotations

import re
import warnings
from datetime import UTC, datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from functools import lru_cache

from dateutil import parser as du_parser

from tidings.dates import has_year, real_date, year_written

_MONTHS = {
    m: i
    for i, names in enumerate(
        (
            ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
            ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
            ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for m in names
}

#: named zones seen in feeds, as offsets in minutes
ZONES: dict[str, int] = {
    "UT": 0, "UTC": 0, "GMT": 0, "Z": 0, "WET": 0,
    "EST": -300, "EDT": -240, "CST": -360, "CDT": -300,
    "MST": -420, "MDT": -360, "PST": -480, "PDT": -420,
    "AKST": -540, "AKDT": -480, "HST": -600,
    "BST": 60, "CET": 60, "CEST": 120, "MET": 60, "MEST": 120, "WEST": 60,
    "EET": 120, "EEST": 180, "MSK": 180, "IST": 330,
    "HKT": 480, "SGT": 480, "AWST": 480, "JST": 540, "KST": 540,
    "ACST": 570, "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780,
}
_CHINA_CST = 480
_DU_ZONES = {name: minutes * 60 for name, minutes in ZONES.items()}

_CN_WEEKDAY = re.compile(r"(?:星期|礼拜|禮拜|周|週)[一二三四五六日天]")
_EN_WEEKDAY = re.compile(r"^\s*[A-Za-z]{2,9}\.?,?\s+(?=\d)")
_RFC822 = re.compile(
    r"""^\s*(?P<day>\d{1,2})[\s\-]+(?P<mon>[A-Za-z]{3,9})\.?[\s\-,]+(?P<year>\d{2,4}),?
    (?:\s+|T)(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:\.\d+)?)?
    \s*(?P<tz>[A-Za-z]{1,5}|[+-]\d{2}:?\d{2}|[+-]\d{4})?\s*(?:\([^)]*\))?\s*$""",
    re.VERBOSE,
)
_RFC822_NO_TIME = re.compile(
    r"^\s*(?P<day>\d{1,2})\s+(?P<mon>[A-Za-z]{3,9})\.?\s+(?P<year>\d{4})\s*$"
)
_ISO = re.compile(
    r"""^\s*(?P<year>\d{4})-?(?P<mon>\d{2})-?(?P<day>\d{2})
    (?:[T\s]+(?P<h>\d{1,2}):?(?P<mi>\d{2})(?::?(?P<s>\d{2})(?:[.,](?P<frac>\d+))?)?)?
    \s*(?P<tz>Z|[+-]\d{2}(?::?\d{2})?|[A-Za-z]{2,5})?\s*$""",
    re.VERBOSE | re.IGNORECASE,
)
_CN_DATE = re.compile(
    r"^\s*(?P<year>\d{4})\s*[年/.\-]\s*(?P<mon>\d{1,2})\s*[月/.\-]\s*(?P<day>\d{1,2})\s*日?"
    r"\s*(?:(?P<h>\d{1,2})[:时時](?P<mi>\d{1,2})(?:[:分](?P<s>\d{1,2})秒?)?)?\s*$"
)


def parse_date(text: str | None, *, cst_china: bool = False) -> datetime | None:
    """Parse a feed date to an aware UTC datetime; ``None`` when there is none
    (nothing, nothing we can read, or a zero date)."""
    if not text:
        return None
    raw = text.strip()
    if not raw:
        return None
    try:
        parsed = _parse(raw, cst_china)
    except OverflowError:  # year 1 in a zone east of UTC is year 0 in UTC
        return None
    return real_date(parsed)


def _parse(raw: str, cst_china: bool) -> datetime | None:
    fast = _fast(raw)
    if fast is not None:
        return fast
    china = cst_china
    if _CN_WEEKDAY.search(raw):
        raw = _CN_WEEKDAY.sub("", raw).strip(" ,，")
        china = True
    result = _parse_known(raw, china)
    if result is None:
        result = _parse_fallback(raw)
    return result


_FAST_RFC = re.compile(
    r"(?:[A-Z][a-z]{2}, )?(\d{1,2}) ([A-Z][a-z]{2}) (\d{4}) (\d\d):(\d\d):(\d\d) "
    r"(?:([+-]\d{4})|GMT|UTC|UT|Z)\Z"
)


def _fast(raw: str) -> datetime | None:
    """The two shapes nearly every feed uses, in a few microseconds."""
    if raw[0].isdigit() and raw[:4].isdigit() and len(raw) >= 10 and raw[4] == "-":
        try:
            parsed = datetime.fromisoformat(raw)
        except ValueError:
            return None
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    m = _FAST_RFC.match(raw)
    if m is None:
        return None
    month = _MONTHS.get(m.group(2).lower())
    if month is None:
        return None
    tz = m.group(7)
    offset = 0 if tz is None else _offset(tz, False)
    try:
        local = datetime(int(m.group(3)), month, int(m.group(1)), int(m.group(4)),
                         int(m.group(5)), int(m.group(6)), tzinfo=_zone(offset or 0))
    except ValueError:
        return None
    return local.astimezone(UTC)


def _parse_known(raw: str, china: bool) -> datetime | None:
    body = _EN_WEEKDAY.sub("", raw, count=1)
    m = _RFC822.match(body)
    if m:
        return _build(m["year"], _MONTHS.get(m["mon"].lower()), m["day"], m["h"], m["mi"],
                      m["s"], None, m["tz"], china)
    m = _ISO.match(raw)
    if m:
        return _build(m["year"], int(m["mon"]), m["day"], m["h"], m["mi"], m["s"], m["frac"],
                      m["tz"], china)
    m = _CN_DATE.match(raw)
    if m:
        # a Chinese-style date without a zone is Beijing time
        return _build(m["year"], int(m["mon"]), m["day"], m["h"], m["mi"], m["s"], None,
                      "+0800", china)
    m = _RFC822_NO_TIME.match(body)
    if m:
        return _build(m["year"], _MONTHS.get(m["mon"].lower()), m["day"], None, None, None,
                      None, None, china)
    return None


def _build(
    year_s: str, month: int | None, day_s: str, h: str | None, mi: str | None,
    s: str | None, frac: str | None, tz: str | None, china: bool,
) -> datetime | None:
    if month is None:
        return None
    year = int(year_s)
    if len(year_s) <= 2:  # RFC 2822 section 4.3
        year += 2000 if year < 50 else 1900
    offset = _offset(tz, china)
    if offset is None:
        return None
    micro = int((frac or "0")[:6].ljust(6, "0"))
    try:
        hour = int(h or 0)
        extra = timedelta(0)
        if hour == 24:  # "24:00" means the end of that day
            hour, extra = 0, timedelta(days=1)
        local = datetime(year, month, int(day_s), hour, int(mi or 0), int(s or 0), micro,
                         tzinfo=_zone(offset))
    except ValueError:
        return None
    return (local + extra).astimezone(UTC)


@lru_cache(maxsize=128)
def _zone(minutes: int) -> timezone:
    return UTC if minutes == 0 else timezone(timedelta(minutes=minutes))


def _offset(tz: str | None, china: bool) -> int | None:
    """Minutes east of UTC; ``None`` for a zone we do not know."""
    if not tz:
        return 0
    if tz[0] in "+-":
        digits = tz[1:].replace(":", "")
        if len(digits) == 2:
            digits += "00"
        if len(digits) != 4 or not digits.isdigit():
            return None
        minutes = int(digits[:2]) * 60 + int(digits[2:])
        return -minutes if tz[0] == "-" else minutes
    name = tz.upper()
    if name == "CST" and china:
        return _CHINA_CST
    return ZONES.get(name)


def _parse_fallback(raw: str) -> datetime | None:
    """dateutil first (it understands AM/PM and prose dates), then the email parser."""
    if not has_year(raw):
        return None  # dateutil would fill a missing year (or day) from today
    parsed: datetime | None
    try:
        with warnings.catch_warnings():
            # a zone name dateutil does not know would silently become local time
            warnings.simplefilter("error", du_parser.UnknownTimezoneWarning)
            parsed = du_parser.parse(raw, tzinfos=_DU_ZONES)
    except du_parser.UnknownTimezoneWarning:
        return None
    except (ValueError, OverflowError, TypeError):
        try:
            parsed = parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
    if parsed is None or not year_written(raw, parsed):
        return None  # dateutil completed the year, or read 0001 as 2001
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
