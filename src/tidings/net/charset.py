"""Turning a body into text (R-HTTP-5).

Order: a byte-order mark (it cannot lie), the Content-Type charset, a charset
declared in the document (``<meta charset>``, ``http-equiv``, the XML
declaration), strict UTF-8, then detection. Legacy labels are widened to the
superset browsers use: Chinese pages labelled ``gb2312`` routinely contain GBK
and GB18030 characters, Western pages labelled ``iso-8859-1`` contain cp1252
quotes.
"""

from __future__ import annotations

import codecs
import re

import charset_normalizer

from tidings.net.types import Response
from tidings.textutil import collapse_fffd

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# keys are Python's canonical codec names
_WIDER = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "big5": "big5hkscs",
    "iso8859-1": "cp1252",
    "ascii": "cp1252",
    "shift_jis": "cp932",
    "euc_kr": "cp949",
}
# labels seen in the wild that Python does not know
_ALIASES = {"x-gbk": "gbk", "gb_2312-80": "gb2312", "gb_2312": "gb2312", "x-sjis": "shift_jis"}

_SNIFF_BYTES = 4096
_XML_DECL = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")
_META = re.compile(rb"""<meta\b[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)


def codec_for(label: str | None) -> str | None:
    """The Python codec to decode a declared ``label`` with, or None if unknown."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    try:
        name = codecs.lookup(_ALIASES.get(label, label)).name
    except LookupError:
        return None
    return _WIDER.get(name, name)


def header_charset(content_type: str) -> str | None:
    for param in content_type.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip("\"'") or None
    return None


def declared_charset(content: bytes) -> str | None:
    """The charset the document declares in its first bytes, if any."""
    head = content[:_SNIFF_BYTES]
    match = _XML_DECL.match(head) or _META.search(head)
    if not match:
        return None
    codec = codec_for(match.group(1).decode("ascii"))
    if codec and codec.startswith(("utf-16", "utf-32")):
        return "utf-8"  # we could read the declaration, so the bytes are ASCII-compatible
    return codec


def _bom(content: bytes) -> tuple[str, int] | None:
    for mark, codec in _BOMS:
        if content.startswith(mark):
            return codec, len(mark)
    return None


_HIGH_RUN = re.compile(rb"[\x80-\xff]+")
_UTF8_SEQUENCE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
#: high bytes per run, on average, up to which undeclared non-UTF-8 text is Latin
_LATIN_RUN = 1.5


def looks_latin(content: bytes) -> bool:
    """Whether undeclared bytes that are not UTF-8 are windows-1252 (Latin-1) text.

    Accented Latin letters stand alone among ASCII ones ("café", "brûlée"), while
    Cyrillic, Greek and CJK text come as runs of high bytes; and text that is
    UTF-8 with a few bad bytes still has valid multi-byte sequences. Statistical
    detection guesses wrong on short Latin text (cp1250 for French: "ŕ" for "à"),
    which is exactly what a feed title is.
    """
    sample = content[:256 * 1024]
    runs = _HIGH_RUN.findall(sample)
    if not runs or len(_UTF8_SEQUENCE.findall(sample)) * 10 > len(runs):
        return False
    if sum(map(len, runs)) > _LATIN_RUN * len(runs):
        return False
    try:
        sample.decode("cp1252")
    except UnicodeDecodeError:  # one of the five bytes cp1252 leaves undefined
        return False
    return True


def _detect(content: bytes) -> str:
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return "utf-8"
    if looks_latin(content):
        return "cp1252"
    best = charset_normalizer.from_bytes(content[:256 * 1024]).best()
    return codec_for(best.encoding if best else None) or "utf-8"


def choose_codec(content: bytes, content_type: str) -> tuple[str, int]:
    """The codec to decode ``content`` with and how many BOM bytes to skip."""
    bom = _bom(content)
    if bom:
        return bom
    codec = codec_for(header_charset(content_type)) or declared_charset(content)
    return (codec or _detect(content)), 0


def decode_text(content: bytes, content_type: str = "") -> str:
    codec, skip = choose_codec(content, content_type)
    return collapse_fffd(content[skip:].decode(codec, errors="replace"))


def decode_body(resp: Response) -> str:
    """The body of ``resp`` as text, by the rules of R-HTTP-5."""
    return decode_text(resp.content, resp.headers.get("content-type", ""))
