"""The RFC 4287 rules the W3C feed validator reported tidings' Atom breaking, checked
by our own small checker (the validator is not on PyPI; it was run offline by hand,
see docs/api.md). Returns the rules broken, as lines; an empty list is a pass."""

from __future__ import annotations

import re
from datetime import datetime

from lxml import etree

ATOM = "http://www.w3.org/2005/Atom"
_A = f"{{{ATOM}}}"
#: RFC 3339 date-time as Atom wants it
_DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
#: RFC 8141: urn:<NID>:<NSS>
_URN = re.compile(r"^urn:[a-z0-9][a-z0-9-]{0,30}[a-z0-9]:\S+$", re.IGNORECASE)
_URI = re.compile(r"^[a-z][a-z0-9+.-]*:\S+$", re.IGNORECASE)
_TEXT_TYPES = {"text", "html", "xhtml"}


def _date(element: etree._Element | None, where: str) -> list[str]:
    if element is None:
        return [f"{where}: no updated"]
    text = element.text or ""
    if not _DATE.match(text):
        return [f"{where}: updated {text!r} is not RFC 3339"]
    datetime.fromisoformat(text.replace("Z", "+00:00"))
    return []


def _namespaces(root: etree._Element) -> list[str]:
    out = []
    for element in root.iter():
        for prefix, uri in (element.nsmap or {}).items():
            if uri.lower().startswith("urn:") and not _URN.match(uri):
                out.append(f"xmlns:{prefix} {uri!r} is not a valid URN")
            elif not _URI.match(uri):
                out.append(f"xmlns:{prefix} {uri!r} is not a URI")
    return sorted(set(out))


def _one(parent: etree._Element, name: str, where: str, required: bool = True) -> list[str]:
    found = parent.findall(_A + name)
    if len(found) > 1:
        return [f"{where}: {len(found)} {name} elements"]
    return [f"{where}: no {name}"] if required and not found else []


def _entry(entry: etree._Element, n: int, feed_has_author: bool) -> list[str]:
    where = f"entry {n}"
    out = [*_one(entry, "id", where), *_one(entry, "title", where),
           *_date(entry.find(_A + "updated"), where)]
    source = entry.find(_A + "source")
    source_author = source is not None and source.find(_A + "author") is not None
    if entry.find(_A + "author") is None and not feed_has_author and not source_author:
        out.append(f"{where}: no author (nor one on the feed or the source)")
    for author in entry.findall(_A + "author"):
        if not (author.findtext(_A + "name") or "").strip():
            out.append(f"{where}: an author without a name")
    for name in ("summary", "content", "title"):
        element = entry.find(_A + name)
        if element is not None and element.get("type", "text") not in _TEXT_TYPES:
            out.append(f"{where}: {name} type {element.get('type')!r}")
    if source is not None:
        out += _one(source, "id", f"{where} source")
        out += _date(source.find(_A + "updated"), f"{where} source")
    return out


def atom_errors(body: bytes) -> list[str]:
    """What in this Atom document breaks the rules above."""
    root = etree.fromstring(body)
    if root.tag != _A + "feed":
        return [f"root is {root.tag}, not an Atom feed"]
    out = _namespaces(root)
    out += _one(root, "id", "feed") + _one(root, "title", "feed")
    out += _date(root.find(_A + "updated"), "feed")
    if not any(link.get("rel") == "self" for link in root.findall(_A + "link")):
        out.append("feed: no link rel=self")
    for link in root.iter(_A + "link"):
        if not link.get("href"):
            out.append("a link without href")
    has_author = root.find(_A + "author") is not None
    for n, entry in enumerate(root.findall(_A + "entry")):
        out += _entry(entry, n, has_author)
    return out
