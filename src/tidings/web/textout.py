"""What the client APIs hand out as text and as HTML, so no stored markup reaches a
feed reader live (issue 29).

Two kinds of stored text leave through the feeds, Google Reader and Fever:

* a **body** is HTML that went through ``tidings.extract.sanitize_html`` when it
  was stored (``upsert_item`` is the one way in), the sanitizer our own pages
  rely on; it is handed out as it is. Sanitizing it again per answer would cost
  five times a 1,000-item stream page (docs/benchmarks.md) for no gain.
* a **summary**, a title, an author, a folder name are *plain text*: they can
  hold ``<script>`` as characters, which is harmless only where the client
  reads them as text. Where a field is HTML by contract (Google Reader's
  ``summary.content``, Fever's ``html``) the text is escaped; where clients are
  known to render a text field as HTML anyway (Google Reader and Fever titles)
  ``&``, ``<`` and ``>`` become their fullwidth forms, as FreshRSS serves them,
  which reads the same as text and cannot open a tag as HTML.

Links are handed out only when they are ``http(s)``: a ``javascript:`` or
``data:`` item link is a live script in the client's link, whatever the body.
"""

from __future__ import annotations

import html
import re

_FULLWIDTH = str.maketrans({"&": "\uff06", "<": "\uff1c", ">": "\uff1e"})
#: what browsers ignore in a URL's scheme (control characters and spaces)
_IGNORED = re.compile(r"[\x00-\x20\x7f]+")


def text_as_html(text: str) -> str:
    """Plain text as an HTML fragment that shows exactly that text."""
    return html.escape(text, quote=True)


def title_text(text: str) -> str:
    """A text field some clients render as HTML: the same words, no markup."""
    return text.translate(_FULLWIDTH)


def web_link(url: str | None) -> str | None:
    """``url`` when it is an http(s) address, else None (leave the link out)."""
    if not url:
        return None
    scheme = _IGNORED.sub("", url[:12]).lower()
    return url if scheme.startswith(("http://", "https://")) else None
