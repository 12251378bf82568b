"""Text helpers for feed entries: HTML to plain text, teasers, images, URLs.

Regular expressions rather than an HTML parser: these run on every entry of
every feed and only need to be good enough for titles, summaries, the teaser
length test and image URLs. The body itself is sanitized later by the pipeline.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urljoin

from tidings.textutil import collapse_ws

TEASER_MAX_CHARS = 1200  # R-RSS-2
MAX_IMAGES = 6  # R-RSS-4
MAX_URL_CHARS = 4096

TEASER_MARKERS = (
    "appeared first on",
    "read the full story",
    "continue reading",
    "read more",
    "阅读全文",
    "閱讀全文",
    "…",
)

_DROP_BLOCKS = re.compile(r"<(script|style|noscript)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_TITLE_TAG = re.compile(
    r"</?(?:a|abbr|b|big|br|cite|code|del|div|em|font|h[1-6]|i|img|ins|mark|p|q|s|small"
    r"|span|strike|strong|sub|sup|time|u)\b[^>]*>",
    re.IGNORECASE,
)
_DATA_URI = re.compile(r"data:[^\"'\s>]+")
_ATTR = re.compile(r"""\b([a-z\-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)
_ELLIPSIS_TAIL = re.compile(r"(?:\.\.\.|…|\[\s*(?:\.\.\.|…)\s*\]|\(\s*(?:\.\.\.|…)\s*\))\W*$")
_HTMLISH = re.compile(r"</?[A-Za-z][^>]*>|&#?\w+;")
_RARE_MARKUP = re.compile("<(?:!--|!\\[CDATA\\[|script|style|noscript|SCRIPT|STYLE)")
#: what html.unescape treats as a character reference (its own pattern)
_CHARREF = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")
_REFS: dict[str, str] = {}
_HTTP = ("http://", "https://")
_STRIPPED = frozenset("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
                      "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a")
_IMG_GATE = re.compile("<(?:img|I)")  # "<img", "<IMG", "<Img" (and a few more)


def html_to_text(fragment: str) -> str:
    """Plain text of an HTML fragment: tags stripped, entities decoded, spaces collapsed."""
    if not fragment:
        return ""
    if "<" in fragment:
        if _RARE_MARKUP.search(fragment) is not None:  # one scan instead of seven
            fragment = _drop_rare_markup(fragment)
        fragment = _TAG.sub(" ", fragment)
    if "&" in fragment:
        fragment = unescape(fragment)
    return " ".join(fragment.split())


def _drop_rare_markup(fragment: str) -> str:
    """Comments, script/style/noscript blocks and CDATA markers, in that order."""
    if "<!--" in fragment:
        fragment = _COMMENT.sub(" ", fragment)
    if ("<script" in fragment or "<style" in fragment or "<noscript" in fragment
            or "<SCRIPT" in fragment or "<STYLE" in fragment):
        fragment = _DROP_BLOCKS.sub(" ", fragment)
    if "<![CDATA[" in fragment:  # CDATA escaped a second time by the publisher
        fragment = fragment.replace("<![CDATA[", " ").replace("]]>", " ")
    return fragment


def unescape(text: str) -> str:
    """``html.unescape``, without a Python call per reference when the references are plain.

    Every distinct reference that ends in ";" is replaced with ``str.replace``;
    with such references no occurrence can be part of a longer one, so this is
    exactly what ``html.unescape`` returns. A reference that decodes to "&" is
    replaced last (so its output is not read again); anything else (a
    reference without ";", two kinds decoding to "&") takes ``html.unescape``.
    """
    if "&" not in text:
        return text
    last = None
    for ref in set(_CHARREF.findall(text)):
        if ref[-1] != ";":
            return html.unescape(text)
        value = _REFS.get(ref)
        if value is None:
            value = html.unescape("&" + ref)
            if len(_REFS) < 4096:
                _REFS[ref] = value
        if "&" in value:
            if last is not None:
                return html.unescape(text)
            last = ref
        else:
            text = text.replace("&" + ref, value)
    if last is not None:
        text = text.replace("&" + last, html.unescape("&" + last))
    return text


def surely_longer(fragment: str, need: int) -> bool:
    """True when ``fragment`` certainly holds more than ``need`` characters of text.

    A lower bound, cheaper than :func:`html_to_text`: tags are removed, but
    whitespace is not counted and every entity is assumed to be as long as
    its source is. Most full-text bodies pass this and skip the exact work.
    """
    if len(fragment) <= need:
        return False
    head = _TAG.sub("", fragment[: need * 3])
    visible = len(head) - head.count(" ") - head.count("\n") - head.count("\t")
    return visible - 9 * head.count("&") - head.count("<") * 40 > need


def text_prefix(fragment: str, need: int) -> str:
    """Plain text of ``fragment``, but only as much as needed to have ``need`` characters.

    Bodies are often 50 KB of HTML; the teaser test and the summary only need
    to know the first ~1,200 characters of text, so the text is taken from
    growing prefixes and the rest is never stripped. A prefix ends before a
    tag it would cut (a cut "<a href=..." is not text), and a prefix that was
    too short tells how dense the text is, which sizes the next one.
    """
    size = need + need // 2
    while size < len(fragment):
        text = html_to_text(_whole_tags(fragment[:size]))
        if len(text) > need:
            return text
        # enough for `need` at the density seen, with a margin; 1.5x to 4x the last size
        wanted = need * 5 // 4 * size // (len(text) or 1)
        size = min(max(wanted, size * 3 // 2), size * 4)
    return html_to_text(fragment)


def _whole_tags(prefix: str) -> str:
    """``prefix`` without a tag cut off at its end."""
    start = prefix.rfind("<")
    return prefix[:start] if start > prefix.rfind(">") else prefix


def clean_title(raw: str) -> str:
    """Titles are plain text: HTML that slipped in is stripped, entities decoded."""
    if not raw:
        return ""
    if ("<" not in raw and "&" not in raw) or _HTMLISH.search(raw) is None:
        return collapse_ws(raw)
    if "&lt;" in raw:
        # escaped twice: after one more unescape only real HTML tags are markup,
        # "<tag>" that the author wrote as text stays
        return collapse_ws(html.unescape(_TITLE_TAG.sub(" ", html.unescape(raw))))
    return html_to_text(raw)


def is_teaser(text: str) -> bool:
    """R-RSS-2: short text that ends in an ellipsis or carries a 'read more' marker."""
    if len(text) >= TEASER_MAX_CHARS:
        return False
    if _ELLIPSIS_TAIL.search(text[-24:]):
        return True
    lowered = text.lower()
    return any(marker in lowered for marker in TEASER_MARKERS)


def absolute_http(value: str | None) -> bool:
    """True for an absolute http(s) URL (an Atom or JSON Feed id that can be opened)."""
    return value is not None and value.strip().startswith(_HTTP)


def resolve(base: str | None, href: str | None) -> str | None:
    """Absolute http(s) URL for ``href``; None for empty, data:, javascript: and so on."""
    if not href:
        return None
    if href.startswith(_HTTP) and len(href) <= MAX_URL_CHARS and " " not in href:
        return href if href[-1] not in _STRIPPED else href.rstrip()
    href = href.strip()
    if not href or len(href) > MAX_URL_CHARS or href.startswith("data:"):
        return None  # inline images (base64) and junk are not links
    if href.startswith(_HTTP):
        return href if " " not in href else href.replace(" ", "%20")
    try:
        absolute = urljoin(base or "", href)
    except ValueError:
        return None
    if absolute.startswith(_HTTP):
        return absolute.replace(" ", "%20")
    return None


def body_images(body: str, base: str | None) -> list[str]:
    """Image URLs of ``<img>`` tags in a body, skipping 1x1 tracking pixels.

    One regex scan rules out most bodies (they are long and mostly without
    images), then ``str.find``. Upper-case tags count only in a body without
    lower-case ones.
    """
    found: list[str] = []
    if _IMG_GATE.search(body) is None:
        return found
    if "<img" not in body:
        if "<IMG" not in body and "<Img" not in body:
            return found
        body = body.replace("<IMG", "<img").replace("<Img", "<img")
    pos = body.find("<img")
    while pos >= 0 and len(found) < MAX_IMAGES:
        end = body.find(">", pos)
        if end < 0:
            break
        url = _img_url(body[pos:end + 1], base)
        if url:
            found.append(url)
        pos = body.find("<img", end)
    return found


def _img_url(tag: str, base: str | None) -> str | None:
    if len(tag) > MAX_URL_CHARS and "data:" in tag:
        tag = _DATA_URI.sub("data:", tag)  # a 100 KB base64 src is not worth parsing
    attrs = {m[0].lower(): m[1] or m[2] or m[3] for m in _ATTR.findall(tag)}
    get = attrs.get
    if unescape(get("width", "")) == "1" or unescape(get("height", "")) == "1":
        return None
    src = unescape(get("src", ""))
    if not src or src.startswith("data:"):
        src = unescape(get("data-src", "")) or unescape(get("data-original", ""))
    return resolve(base, src)


def unique_images(urls: list[str]) -> tuple[str, ...]:
    """First ``MAX_IMAGES`` distinct URLs, in order."""
    seen: dict[str, None] = {}
    for url in urls:
        seen.setdefault(url, None)
        if len(seen) >= MAX_IMAGES:
            break
    return tuple(seen)


def looks_like_image(url: str, mime: str = "") -> bool:
    if mime:
        return mime.lower().startswith("image/")
    path = url.split("?", 1)[0].lower()
    return path.endswith((".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif", ".svg"))


def has_cjk_date(raw: str | None) -> bool:
    """A date written with CJK characters comes from a Chinese-language publisher."""
    if not raw or raw.isascii():
        return False
    return _CJK.search(raw) is not None
