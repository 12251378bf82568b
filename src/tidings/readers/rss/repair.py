"""Making a broken XML feed well-formed enough for lxml (R-RSS-6).

Only runs after a strict parse failed. The usual faults, in the order they are
fixed: a wrong or missing encoding, garbage before the root, HTML entities that
XML does not know (``&nbsp;``), bare ampersands, control characters.
"""

from __future__ import annotations

import codecs
import re
from html.entities import html5

from charset_normalizer import from_bytes

from tidings.net.charset import codec_for, looks_latin  # one table for pages and feeds
from tidings.textutil import collapse_fffd

_DECL_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._\-]+)["']""")
_DECL_ENCODING_TEXT = re.compile(r"""^(\s*<\?xml[^>]*?)\s+encoding\s*=\s*["'][^"']*["']""")
_LATE_DECL = re.compile(r"(?<=.)<\?xml\b[^>]*>", re.DOTALL)
_UNQUOTED_ATTR = re.compile(r"""(<[A-Za-z][^<>"']*?\s[\w:.\-]+=)([^\s"'<>]+)""")
_TEXT_ELEMENT = re.compile(
    r"(<((?:[\w\-]+:)?(?:title|description|summary|encoded))\b[^>]*>)(.*?)(</\2\s*>)", re.DOTALL
)
#: feed structure inside a text element means the element was never closed
_STRUCTURE = re.compile(r"<(?:[\w\-]+:)?(?:item|entry|title|link|channel|guid|pubDate)\b")
_CDATA = re.compile(r"(<!\[CDATA\[.*?\]\]>)", re.DOTALL)
# every "&" except the five XML entities and character references, which are fine
_AMP = re.compile(
    r"&(?!(?:amp|lt|gt|quot|apos|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});)"
    r"(?:(#[xX][0-9a-fA-F]+|#[0-9]+|[A-Za-z][A-Za-z0-9]*)(;?))?"
)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_XML_ENTITIES = frozenset(("amp", "lt", "gt", "quot", "apos"))
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
#: a UTF-8 document with at most this share of broken bytes is read as UTF-8
MAX_BAD_UTF8_SHARE = 0.001


def declared_encoding(data: bytes) -> str | None:
    m = _DECL_ENCODING.match(data[:300])
    return m.group(1).decode("ascii").lower() if m else None


def decode(data: bytes, header_charset: str | None) -> tuple[str, list[str]]:
    """The document as text, plus warnings when its encoding label was wrong."""
    for bom, bom_codec in _BOMS:
        if data.startswith(bom):
            return data.decode(bom_codec, "replace"), []
    declared = declared_encoding(data)
    tried: list[str] = []
    for label in (declared, header_charset, "utf-8"):
        name = codec_for(label)
        if not name or name in tried:
            continue
        tried.append(name)
        try:
            text = data.decode(name)
        except UnicodeDecodeError:
            continue
        return text, _label_warning(declared, name)
    if declared is None and header_charset is None and looks_latin(data):
        return data.decode("cp1252", "replace"), ["no encoding declared and the bytes are not "
                                                  "UTF-8; decoded as windows-1252"]
    text = data.decode("utf-8", "replace")
    if text.count("\ufffd") <= len(text) * MAX_BAD_UTF8_SHARE:
        return collapse_fffd(text), ["some bytes are not valid UTF-8; replaced"]
    best = from_bytes(data[:200_000]).best()
    if best is not None and best.encoding:
        codec = codec_for(best.encoding) or "utf-8"
        return collapse_fffd(data.decode(codec, "replace")), _label_warning(declared, codec)
    return collapse_fffd(text), ["encoding unknown; decoded as UTF-8 with replacements"]


def _label_warning(declared: str | None, used: str) -> list[str]:
    if declared and codec_for(declared) != used:
        return [f"declared encoding {declared} is wrong; decoded as {used}"]
    return []


#: a numeric character reference (found by scripts/fuzz.sh: one naming a surrogate made
#: libxml2's recovery hand back text that is not UTF-8, and feedparser fail encoding it)
_CHARREF = re.compile(rb"&#(?:[xX]([0-9a-fA-F]{1,8})|([0-9]{1,10}));")


def _valid_charref(match: re.Match[bytes]) -> bytes:
    hexa, decimal = match.groups()
    point = int(hexa, 16) if hexa else int(decimal)
    if point == 0 or 0xD800 <= point <= 0xDFFF or point > 0x10FFFF:
        return b"&#xFFFD;"
    return match.group(0)


def valid_charrefs(data: bytes) -> bytes:
    """``data`` with references to no character (NUL, surrogates, past U+10FFFF) as U+FFFD."""
    return _CHARREF.sub(_valid_charref, data) if b"&#" in data else data


def repair(data: bytes, header_charset: str | None) -> tuple[bytes, list[str]]:
    """Well-formed-as-possible UTF-8 bytes (without an encoding declaration)."""
    text, warnings = decode(data, header_charset)
    start = text.find("<")
    if start > 0:
        text = text[start:]
    text = _DECL_ENCODING_TEXT.sub(r"\1", text, count=1)
    text = _LATE_DECL.sub("", text)
    if _UNQUOTED_ATTR.search(text):
        text = _UNQUOTED_ATTR.sub(r'\1"\2"', text)
        warnings.append("unquoted attribute values quoted")
    if _CONTROL.search(text):
        text = _CONTROL.sub("", text)
        warnings.append("control characters removed")
    fixed = _fix_entities(text)
    if fixed != text:
        warnings.append("undeclared entities or bare ampersands replaced")
    return fixed.encode("utf-8"), warnings


def wrap_markup(data: bytes) -> bytes:
    """Raw HTML inside text elements becomes CDATA (the output of :func:`repair`)."""
    text = data.decode("utf-8")
    return _TEXT_ELEMENT.sub(_wrap_markup, text).encode("utf-8")


def _wrap_markup(m: re.Match[str]) -> str:
    """Raw HTML inside <title>/<description>/...: unclosed tags there break the tree."""
    inner = m.group(3)
    if "<" not in inner or "<![CDATA[" in inner or _STRUCTURE.search(inner):
        return m.group(0)
    return f"{m.group(1)}<![CDATA[{inner.replace(']]>', ']]&gt;')}]]>{m.group(4)}"


def _fix_entities(text: str) -> str:
    if "&" not in text:
        return text
    parts = _CDATA.split(text)
    for i in range(0, len(parts), 2):
        if "&" in parts[i]:
            parts[i] = _AMP.sub(_entity, parts[i])
    return "".join(parts)


def _entity(m: re.Match[str]) -> str:
    name, semi = m.group(1), m.group(2)
    if name is None:
        return "&amp;"
    if name[0] == "#":
        return _char_ref(name) if semi else "&amp;" + name
    if name in _XML_ENTITIES and semi:
        return m.group(0)
    # "&copy=1" in a URL is an ampersand, not an entity: only "name;" is decoded
    chars = html5.get(name + ";") if semi else None
    if chars is None:
        return "&amp;" + name + semi
    return "".join(f"&#{ord(c)};" for c in chars)


def _char_ref(name: str) -> str:
    try:
        code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
    except ValueError:
        return "&amp;" + name + ";"
    legal = code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0x10FFFF
    return f"&#{code};" if legal and code not in (0xFFFE, 0xFFFF) else "\ufffd"
