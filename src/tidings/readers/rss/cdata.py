"""Large CDATA bodies lifted out of a document before libxml2 reads it.

libxml2 reads a CDATA section one character at a time; on the corpus that was
about a fifth of all the parser's work, for text that is handed back as it is.
So a body-sized section that is the whole content of a ``description``,
``content:encoded``, Atom ``content`` or ``summary`` element is cut out of the
bytes and replaced with a short placeholder; ``bytes.decode`` reads it instead,
and :func:`restore` puts it back into the fields after the tree was read.

What libxml2 would have checked is checked here: UTF-8 only, no characters XML
forbids, line ends normalized. A section that fails a check stays in place, so
libxml2 reports the same error it always did. Placeholders are private-use
characters; a document that already contains them is not touched.
"""

from __future__ import annotations

import html
import re

RAW = "\ue000"  # placeholder start: restore the text as it was
ESCAPED = "\ue002"  # placeholder start after the text was serialized: restore it escaped
END = "\ue001"
_MARKERS = (RAW.encode(), ESCAPED.encode(), END.encode())
_PLACEHOLDER = re.compile(f"([{RAW}{ESCAPED}])(\\d+){END}")
MIN_SECTION = 512  # bytes; smaller sections cost libxml2 little
_START = b"<![CDATA["
_NAMES = frozenset((b"description", b"encoded", b"content", b"summary"))
_START_TAG = re.compile(rb"<(?:[A-Za-z_][\w.\-]*:)?([A-Za-z_][\w.\-]*)(?:\s[^<>]*)?>\s*\Z")
_CONTROLS = bytes(c for c in range(32) if c not in (9, 10, 13))  # forbidden in XML 1.0


def lift(data: bytes) -> tuple[bytes, list[str]]:
    """``data`` with large CDATA bodies replaced by placeholders, and those bodies."""
    if _START not in data or b"purl.org/atom/ns#" in data[:4096]:
        return data, []  # Atom 0.3 may have base64 content, which is decoded from the text
    if b"\xee" in data and any(m in data for m in _MARKERS):  # one memchr for the rare lead byte
        return data, []
    parts: list[bytes] = []
    sections: list[str] = []
    comments = b"<!--" in data
    pos = 0
    start = data.find(_START)
    while start >= 0:
        end = _section_end(data, start + 9)
        if end < 0:
            break
        text = _liftable(data, start, end, comments) if end - start - 9 >= MIN_SECTION else None
        if text is not None:
            parts += (data[pos:start], b"%s%d%s" % (_MARKERS[0], len(sections), _MARKERS[2]))
            sections.append(text)
            pos = end + 3
        start = data.find(_START, end + 3)
    if not sections:
        return data, []
    parts.append(data[pos:])
    return b"".join(parts), sections


def _section_end(data: bytes, pos: int) -> int:
    """Where the "]]>" that ends a section is (searching "]]" is faster: ">" is everywhere)."""
    end = data.find(b"]]", pos)
    while end >= 0 and data[end + 2:end + 3] != b">":
        end = data.find(b"]]", end + 1)
    return end


def _liftable(data: bytes, start: int, end: int, comments: bool) -> str | None:
    """The section's text when it is the whole content of a body element, else None."""
    if not data[end + 3:end + 67].lstrip().startswith(b"</"):
        return None
    tag_start = data.rfind(b"<", max(0, start - 512), start)
    tag = _START_TAG.match(data, tag_start, start) if tag_start >= 0 else None
    if tag is None or tag.group(1) not in _NAMES:
        return None
    body = data[start + 9:end]
    if len(body.translate(None, _CONTROLS)) != len(body):
        return None
    if comments and b"-->" in body and body.count(b"-->") > body.count(b"<!--"):
        return None  # perhaps the section started inside a comment: let libxml2 decide
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text.isascii() and ("\ufffe" in text or "\uffff" in text):
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def mark_escaped(text: str) -> str:
    """Placeholders in ``text`` that was escaped or serialized stand for escaped text."""
    return text.replace(RAW, ESCAPED) if RAW in text else text


def restore(text: str, sections: list[str]) -> str:
    """``text`` with its placeholders replaced by the sections they stand for."""
    if END not in text:
        return text

    def one(m: re.Match[str]) -> str:
        index = int(m.group(2))
        if index >= len(sections):
            return m.group(0)
        body = sections[index]
        return body if m.group(1) == RAW else html.escape(body, quote=False)

    return _PLACEHOLDER.sub(one, text)
