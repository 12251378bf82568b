"""The HTML tags a stored body may contain: one list for the sanitizer that
stores bodies (``tidings.extract.sanitize``) and the writer that shows them
(``tidings.web.body``), so the two can never drift apart."""

from __future__ import annotations

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
