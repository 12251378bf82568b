"""Turn stored HTML into what the article page shows, without trusting it.

Bodies are sanitized when stored (R-EXTRACT-3), but the reader still never
pastes stored markup into a page: this module re-tokenizes it and writes every
tag, attribute and text node out again itself, escaping each one, so a flaw in
the stored HTML cannot break out of an attribute or open a script. Along the
way it adds what R-UI-4 asks of the article view: lazy, async images, wide
tables in a scrolling wrapper, and ``<mark>`` around the search terms.

Search snippets (escaped text with ``<mark>`` from storage) are not trusted
either: their text is unescaped and escaped again, and ``<mark>`` is the one
tag written back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from html import escape, unescape
from html.parser import HTMLParser

from markupsafe import Markup

from tidings.htmlpolicy import ALLOWED_TAGS

_TAGS = ALLOWED_TAGS
_VOID = frozenset({"br", "col", "hr", "img", "wbr"})
# whose content is dropped along with them: code or active content, never text
_DROP = frozenset({"script", "style", "template", "noscript", "iframe", "object", "embed",
                   "svg", "math", "textarea", "title", "head", "xmp", "noembed", "noframes"})
_URL_ATTRS = frozenset({"href", "src", "cite", "data-original-src"})
_ATTRS = frozenset({"title", "lang", "dir", "style", "href", "hreflang", "src", "alt", "width",
                    "height", "data-original-src", "colspan", "rowspan", "headers", "scope",
                    "align", "start", "reversed", "type", "value", "datetime", "cite", "open"})
_SAFE_SCHEME = re.compile(r"^(?:https?:|mailto:|/|#|\.|[^:]*$)", re.IGNORECASE)
# The page's CSP allows no inline style, so the few structural declarations the
# sanitizer keeps become classes of the reader's own stylesheet.
_STYLE_CLASSES = {
    ("text-align", "center"): "ta-center", ("text-align", "right"): "ta-right",
    ("text-align", "justify"): "ta-justify", ("font-weight", "bold"): "fw-bold",
    ("font-weight", "700"): "fw-bold", ("font-weight", "600"): "fw-bold",
    ("font-weight", "800"): "fw-bold", ("font-weight", "900"): "fw-bold",
    ("font-style", "italic"): "fs-italic",
}
_CTRL = re.compile(r"[\x00-\x20\x7f]+")


def _style_classes(style: str) -> list[str]:
    out = []
    for decl in style.split(";"):
        name, _, value = decl.partition(":")
        cls = _STYLE_CLASSES.get((name.strip().lower(), value.strip().lower()))
        if cls:
            out.append(cls)
    return out


def _safe_url(value: str) -> bool:
    return bool(_SAFE_SCHEME.match(_CTRL.sub("", value)))


class _Writer(HTMLParser):
    def __init__(self, terms: Sequence[str], tags: frozenset[str], enrich: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.tags = tags
        self.enrich = enrich
        self.pattern = _term_pattern(tuple(terms))
        self.drop_depth = 0
        self.in_mark = 0
        self.open_tables = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROP:
            self.drop_depth += 1
            return
        if self.drop_depth or tag not in self.tags:
            return
        parts = [tag]
        classes: list[str] = []
        for name, given in attrs:
            if name not in _ATTRS or (given is None and name not in {"open", "reversed"}):
                continue
            value = given or ""
            if name in _URL_ATTRS and not _safe_url(value):
                continue
            if name == "style":
                classes.extend(_style_classes(value))
                continue
            parts.append(f'{name}="{escape(value, quote=True)}"')
        if classes and self.enrich:
            parts.append(f'class="{" ".join(sorted(set(classes)))}"')
        if tag == "img" and self.enrich:
            parts.append('loading="lazy" decoding="async"')
        if tag == "a" and self.enrich:
            parts.append('rel="noopener noreferrer nofollow"')
        if tag == "table" and self.enrich:
            self.out.append('<div class="table-wrap">')
            self.open_tables += 1
        if tag == "mark":
            self.in_mark += 1
        self.out.append("<" + " ".join(parts) + ">")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID and tag not in _DROP:
            self.handle_endtag(tag)
        elif tag in _DROP:
            self.drop_depth = max(0, self.drop_depth - 1)

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROP:
            self.drop_depth = max(0, self.drop_depth - 1)
            return
        if self.drop_depth or tag not in self.tags or tag in _VOID:
            return
        self.out.append(f"</{tag}>")
        if tag == "mark":
            self.in_mark = max(0, self.in_mark - 1)
        if tag == "table" and self.open_tables:
            self.out.append("</div>")
            self.open_tables -= 1

    def handle_data(self, data: str) -> None:
        if self.drop_depth:
            return
        if self.pattern is None or self.in_mark:
            self.out.append(escape(data, quote=False))
        else:
            self.out.append(_mark(data, self.pattern))

    def result(self) -> str:
        self.close()
        return "".join(self.out) + "</div>" * self.open_tables


@lru_cache(maxsize=64)
def _term_pattern(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    words = sorted({t.strip() for t in terms if t.strip()}, key=len, reverse=True)
    if not words:
        return None
    return re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)


def _mark(text: str, pattern: re.Pattern[str]) -> str:
    out: list[str] = []
    pos = 0
    for match in pattern.finditer(text):
        out.append(escape(text[pos:match.start()], quote=False))
        out.append(f"<mark>{escape(match.group(), quote=False)}</mark>")
        pos = match.end()
    out.append(escape(text[pos:], quote=False))
    return "".join(out)


@lru_cache(maxsize=256)
def _render_body(html: str, terms: tuple[str, ...]) -> str:
    writer = _Writer(terms, _TAGS, enrich=True)
    writer.feed(html)
    return writer.result()


def render_body(html: str, terms: Sequence[str] = ()) -> Markup:
    """The article body, re-written tag by tag (see the module docstring)."""
    return Markup(_render_body(html, tuple(terms)))  # noqa: S704 - every piece escaped above


_MARK_TAG = re.compile(r"(</?mark>)", re.IGNORECASE)


def render_snippet(snippet: str) -> Markup:
    """A search snippet: its text escaped again, only ``<mark>`` kept (balanced).

    Storage writes snippets as escaped text and ``<mark>`` tags only, so a split
    on those tags is all the parsing one needs (a page has 50 of them: an HTML
    parser per hit would be a large share of it); anything else that looks like
    a tag is shown as text.
    """
    out: list[str] = []
    marked = False
    for n, part in enumerate(_MARK_TAG.split(snippet)):
        if n % 2 == 0:
            out.append(escape(unescape(part), quote=False))
        elif (part[1] != "/") != marked:  # an opening tag outside a mark, or the reverse
            marked = not marked
            out.append("<mark>" if marked else "</mark>")
    if marked:
        out.append("</mark>")
    return Markup("".join(out))  # noqa: S704 - text escaped, only <mark> written


def highlight(text: str, terms: Sequence[str]) -> Markup:
    """Plain text (a title) escaped, with the search terms marked."""
    pattern = _term_pattern(tuple(terms))
    if pattern is None:
        return Markup(escape(text, quote=False))  # noqa: S704 - escaped
    return Markup(_mark(text, pattern))  # noqa: S704 - escaped piece by piece
