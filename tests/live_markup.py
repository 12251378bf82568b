"""Is anything live in what a feed reader renders? The detector of the hostile-output
suite (issue 29), reading HTML as a browser engine does.

A fragment is parsed with html5lib, which implements the WHATWG parsing
algorithm of the engines clients render in (WebKit, Blink), so entity tricks,
broken nesting and foreign content come out as a browser sees them. It is
parsed as the body of a page with scripting on, as clients show an article
(their template around it): ``<body onload>`` then lands on the page's body,
and ``<noscript>`` holds raw text, as in a browser. Live means
anything that runs or loads active content: a script-capable element, an
``on*`` handler, a ``javascript:``/``data:``/``vbscript:`` URL in any URL
attribute, a style that calls ``expression``/``url`` or imports.
"""

from __future__ import annotations

import re

import html5lib

_ACTIVE = frozenset({
    "script", "iframe", "frame", "frameset", "object", "embed", "applet", "svg", "math",
    "style", "link", "meta", "base", "form", "button", "input", "textarea", "select",
    "template", "xmp", "plaintext", "noembed", "noframes", "portal", "isindex",
})
_URL_ATTRS = frozenset({
    "href", "src", "action", "formaction", "data", "background", "poster", "lowsrc",
    "dynsrc", "codebase", "cite", "ping", "srcset", "content", "xlink:href", "to", "from",
    "values",
})
_BAD_SCHEMES = ("javascript:", "data:", "vbscript:", "livescript:")
_IGNORED = re.compile(r"[\x00-\x20\x7f]+")
_BAD_STYLE = re.compile(r"expression|url\s*\(|javascript:|@import|behavior|binding",
                        re.IGNORECASE)


def bad_url(value: str) -> bool:
    """A URL a click or a load would run (browsers ignore spaces and controls in it)."""
    return _IGNORED.sub("", value).lower().startswith(_BAD_SCHEMES)


def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1].lower()


def live_parts(fragment: str) -> list[str]:
    """What is live in ``fragment`` read as HTML: ``<script>``, ``img@onerror``, ..."""
    if "<" not in fragment and "&" not in fragment:
        return []
    parser = html5lib.HTMLParser(namespaceHTMLElements=False)
    root = parser.parse(f"<!DOCTYPE html><html><head></head><body>{fragment}</body></html>",
                        scripting=True)
    found: list[str] = []
    for element in root.iter():
        tag = _local(element.tag) if isinstance(element.tag, str) else ""
        if tag in _ACTIVE:
            found.append(f"<{tag}>")
        for key, value in element.attrib.items():
            name = _local(key)
            if name.startswith("on") or name == "srcdoc":
                found.append(f"{tag}@{name}")
            elif (name in _URL_ATTRS or key.endswith("}href")) and bad_url(value):
                found.append(f"{tag}@{name}={value[:30]}")
            elif name == "style" and _BAD_STYLE.search(value):
                found.append(f"{tag}@style")
    return found
