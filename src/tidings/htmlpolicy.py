"""The HTML tags a stored body may contain: one list for the sanitizer that
stores bodies (``tidings.extract.sanitize``) and the writer that shows them
(``tidings.web.body``), so the two can never drift apart. And the one way a CSS
selector from a config is compiled, for extraction and the page readers alike."""

from __future__ import annotations

from functools import lru_cache

from lxml.cssselect import CSSSelector

ALLOWED_TAGS = frozenset(
    {
        "a", "abbr", "acronym", "article", "aside", "b", "bdi", "bdo", "blockquote", "br",
        "caption", "center", "cite", "code", "col", "colgroup", "data", "dd", "del",
        "details", "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "footer",
        "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "i", "img", "ins",
        "kbd", "li", "mark", "ol", "p", "pre", "q", "rp", "rt", "rtc", "ruby", "s",
        "samp", "section", "small", "span", "strike", "strong", "sub", "summary", "sup",
        "table", "tbody", "td", "tfoot", "th", "thead", "time", "tr", "tt", "u", "ul",
        "var", "wbr",
    }
)  # fmt: skip


@lru_cache(maxsize=512)
def compile_css(selector: str) -> CSSSelector:
    """The compiled selector; ValueError with cssselect's reason when it does not compile."""
    try:
        return CSSSelector(selector)
    except Exception as exc:  # cssselect raises several unrelated types
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"invalid CSS selector {selector!r} ({reason})") from None
