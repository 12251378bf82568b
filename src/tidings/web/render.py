"""The Jinja environment and the small formatting helpers templates use.

Autoescaping is on for every template; the only ``Markup`` values a template
ever sees come from :mod:`tidings.web.body` (re-written HTML), from
:func:`sparkline` (numbers only) and from :func:`list_rows` and :func:`search_rows`
(every value escaped).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape as _esc
from pathlib import Path
from urllib.parse import quote, urlsplit

from babel.dates import format_timedelta
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from tidings.model import Item, ItemBrief, SearchHit
from tidings.settings import VERSION
from tidings.textutil import plural
from tidings.web.body import highlight, render_body, render_snippet
from tidings.web.listing import Row

TEMPLATES = Path(__file__).parent / "templates"


def item_time(item: Item | ItemBrief) -> datetime:
    """The time a reader cares about: when it was published, else when we saw it."""
    return item.published_at or item.discovered_at


def ago(when: datetime | None, now: datetime | None = None) -> str:
    """Short relative time: ``now``, ``5m``, ``3h``, ``2d``, then a date."""
    if when is None:
        return "never"
    now = now or datetime.now(UTC)
    seconds = (now - when).total_seconds()
    if seconds < 0:
        return "soon" if seconds > -86400 else when.strftime("%Y-%m-%d")
    if seconds < 60:
        return "now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h"
    if seconds < 30 * 86400:
        return f"{int(seconds // 86400)}d"
    return when.strftime("%Y-%m-%d")


def relative(when: datetime | None, now: datetime | None = None) -> str:
    """``3 minutes ago``, ``in 2 hours``, ``never``: CLDR words from babel, for sentences
    (``ago`` is the compact form of the list rows)."""
    if when is None:
        return "never"
    delta = when - (now or datetime.now(UTC))
    if abs(delta.total_seconds()) < 10:
        return "just now"  # babel would say "in 0 seconds"
    return format_timedelta(delta, add_direction=True, locale="en")


def until(when: datetime | None, now: datetime | None = None) -> str:
    """``in 12m`` for a future time (next fetch), ``due`` when it has passed."""
    if when is None:
        return "not scheduled"
    now = now or datetime.now(UTC)
    seconds = (when - now).total_seconds()
    if seconds <= 0:
        return "due"
    if seconds < 3600:
        return f"in {int(seconds // 60) or 1}m"
    if seconds < 86400:
        return f"in {int(seconds // 3600)}h"
    return f"in {int(seconds // 86400)}d"


def isotime(when: datetime | None) -> str:
    return when.isoformat(timespec="seconds") if when else ""


def fulltime(when: datetime | None) -> str:
    """``2024-05-01 12:30 UTC``, cut from the ISO form (cheaper than strftime, and every
    list row shows one)."""
    return _fulltime(when.isoformat()) if when else ""


def _fulltime(iso: str) -> str:
    return f"{iso[:10]} {iso[11:16]} UTC"


def safe_href(url: str | None) -> str:
    """Only http(s) links leave the page: a hostile feed may say ``javascript:``."""
    if not url:
        return ""
    cleaned = url.strip()
    return cleaned if cleaned.lower().startswith(("http://", "https://")) else ""


def host(url: str | None) -> str:
    return (urlsplit(url).hostname or "") if url else ""


def sparkline(values: Sequence[int], width: int = 84, height: int = 20) -> Markup:
    """Items per day as an inline SVG polyline (built from numbers only)."""
    if not values:
        return Markup("")
    top = max(*values, 1)
    step = width / max(len(values) - 1, 1)
    points = " ".join(
        f"{i * step:.1f},{height - 2 - (v / top) * (height - 4):.1f}" for i, v in enumerate(values)
    )
    label = ", ".join(str(int(v)) for v in values)
    return Markup(  # noqa: S704 - numbers only
        f'<svg class="spark" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="items per day: {label}">'
        f'<polyline points="{points}" fill="none" stroke="currentColor" stroke-width="1.5"/>'
        "</svg>"
    )


def list_rows(rows: Sequence[Row], view: str, now: datetime) -> Markup:
    """The ``<li>`` rows of a list page (list.html has the rest of the page).

    Written here rather than in the template because lists and searches are the
    pages people open most, and for 50 rows Jinja's escaping, attribute look-ups
    and context calls per expression cost twice what these f-strings do
    (docs/benchmarks.md, "Web reader"). Every value that comes from an item is
    escaped; only http(s) links are linked.
    """
    return Markup("".join(  # noqa: S704 - every piece escaped in _row
        _more_row(r) if r.more_count else _row(r, view, now) for r in rows))


def _more_row(row: Row) -> str:
    it = row.item
    return (f'  <li class="row more"><a href="/source/{_esc(it.source_id)}?before='
            f'{_esc(row.more_cursor)}">{row.more_count} more from '
            f"{_esc(it.source_title or it.source_id)} →</a></li>\n")


def _row(row: Row, view: str, now: datetime) -> str:
    it = row.item
    raw = f'<a href="/item/{it.id}/raw">raw page</a>' if view == "review" else ""
    out = [
        _row_head(it, row.ids, "", _esc(it.title or "(untitled)"), now),
        f'      {raw}<span class="star" aria-label="starred" title="starred">★</span>\n'
        "    </span>\n"]
    if row.folded:
        label = f"+{row.folded} sources" if row.story else f"+{row.folded}"
        out.append(f'    <details class="reprints">\n      <summary title="also published by '
                   f'{row.folded} more">{label}</summary>\n      <ul>\n')
        for o in row.others:
            seen = item_time(o)
            out.append(f'        <li><a href="/item/{o.id}">{_esc(o.source_title or o.source_id)}'
                       f'</a> <time datetime="{isotime(seen)}">{ago(seen, now)}</time></li>\n')
        out.append("      </ul>\n    </details>\n")
    out.append("  </li>\n")
    return "".join(out)


def search_rows(hits: Sequence[SearchHit], q: str, terms: Sequence[str],
                now: datetime) -> Markup:
    """The ``<li>`` rows of a search page, for the reason given in :func:`list_rows`."""
    back = f"?q={_esc(quote(q, safe='/'))}"  # the article marks the terms it was found with
    return Markup("".join(  # noqa: S704 - every piece escaped in _hit_row
        _hit_row(h, back, terms, now) for h in hits))


def _hit_row(hit: SearchHit, back: str, terms: Sequence[str], now: datetime) -> str:
    it = hit.item
    snippet = f'    <p class="snippet">{render_snippet(hit.snippet)}</p>\n' if hit.snippet else ""
    return (
        f"{_row_head(it, it.id, back, highlight(it.title or '(untitled)', terms), now)}"
        '      <span class="star" aria-label="starred">★</span>\n'
        "    </span>\n"
        f"{snippet}  </li>\n")


def _row_head(it: ItemBrief, ids: str | int, query: str, title: str, now: datetime) -> str:
    """A list or search row up to its time: state, data for the scripts, title, source.

    ``title`` is escaped (or highlighted) by the caller; ``query`` follows the
    article's link. Plain f-strings for the reason given in :func:`list_rows`.
    """
    when = item_time(it)
    iso = isotime(when)
    state = (" unread" if not it.read else "") + (" starred" if it.starred else "")
    return (
        f'  <li class="row{state}" data-id="{it.id}" data-ids="{ids}" '
        f'data-url="{_esc(safe_href(it.url))}">\n'
        f'    <a class="title" href="/item/{it.id}{query}">{title}</a>\n'
        f'    <span class="meta">\n'
        f'      <a class="src" href="/source/{_esc(it.source_id)}">'
        f"{_esc(it.source_title or it.source_id)}</a>\n"
        f'      <time datetime="{iso}" title="{_fulltime(iso)}">{ago(when, now)}</time>\n')


def make_env() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True, default_for_string=True),
        auto_reload=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(ago=ago, until=until, isotime=isotime, fulltime=fulltime, host=host,
                       safe_href=safe_href, relative=relative, plural=plural)
    env.globals.update(
        item_time=item_time, sparkline=sparkline, render_body=render_body, list_rows=list_rows,
        search_rows=search_rows,
        render_snippet=render_snippet, highlight=highlight, version=VERSION,
    )
    return env
