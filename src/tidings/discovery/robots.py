"""robots.txt for the crawler (R-DISC-3), read by Protego, judged by RFC 9309.

What an answer means (RFC 9309 section 2.3):

* 2xx: the rules, parsed by Protego (Google's matching: longest match wins,
  ``*`` and ``$`` wildcards, the most specific user-agent group). A body that
  is an HTML page is no robots file (sites that answer every path with their
  home page): no rules;
* 4xx: no robots file, everything allowed;
* 5xx, no answer, a redirect loop: the server cannot say, so nothing is
  fetched from that host;
* a file over :data:`ROBOTS_MAX_BYTES` (the RFC asks to read at least 500 KiB)
  is refused whole: it is a trap or a mistake, and the crawler leaves the host.

The verdict is plain data (:class:`RobotsVerdict` as a JSON-able dict), so
the crawler can store it and never ask a host for its robots.txt twice in
one crawl; :class:`RobotsCache` keeps a bounded number of parsed files.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any
from urllib.parse import urlsplit

from protego import Protego

from tidings.errors import BodyTooLargeError, FetchError
from tidings.net import Fetcher, decode_body
from tidings.settings import VERSION

__all__ = ["CRAWLER_AGENT", "ROBOTS_MAX_BYTES", "RobotsCache", "crawler_user_agent",
           "fetch_robots", "robots_url"]

CRAWLER_AGENT = "tidings-crawler"  # the product token robots.txt groups name
ROBOTS_MAX_BYTES = 512 * 1024
_CACHE = 512


def crawler_user_agent(bot_url: str) -> str:
    """The crawler's own User-Agent: its robots.txt token, version and where to read about it."""
    return f"{CRAWLER_AGENT}/{VERSION} (+{bot_url})"


def robots_url(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/robots.txt"


def _looks_html(text: str, content_type: str) -> bool:
    head = text.lstrip()[:200].lower()
    return "html" in content_type or head.startswith(("<!doctype", "<html", "<head", "<body"))


async def fetch_robots(fetcher: Fetcher, url: str, user_agent: str,
                       timeout: float) -> dict[str, Any]:  # noqa: ASYNC109 - per request
    """The verdict on ``url``'s host: ``{"verdict": "rules"|"allow"|"deny", "body", "note"}``."""
    try:
        resp = await fetcher.fetch(url, raise_for_status=False, max_bytes=ROBOTS_MAX_BYTES,
                                   timeout=timeout, user_agent=user_agent,
                                   headers={"accept": "text/plain, */*;q=0.5"})
    except BodyTooLargeError:
        return {"verdict": "deny", "body": "",
                "note": f"robots.txt is larger than {ROBOTS_MAX_BYTES // 1024} KiB"}
    except FetchError as exc:
        return {"verdict": "deny", "body": "", "note": f"robots.txt unreachable: {exc}"}
    if resp.status >= 500:
        return {"verdict": "deny", "body": "", "note": f"robots.txt answered HTTP {resp.status}"}
    if resp.status >= 400:
        return {"verdict": "allow", "body": "", "note": ""}
    text = decode_body(resp)
    if _looks_html(text, resp.content_type):
        return {"verdict": "allow", "body": "", "note": "robots.txt is an HTML page: no rules"}
    return {"verdict": "rules", "body": text, "note": ""}


class RobotsCache:
    """Parsed robots files by origin, the least recently used dropped beyond a bound."""

    def __init__(self, size: int = _CACHE) -> None:
        self._size = size
        self._rules: OrderedDict[str, tuple[Protego | bool, str]] = OrderedDict()

    def known(self, url: str) -> bool:
        return robots_url(url) in self._rules

    def learn(self, url: str, verdict: dict[str, Any]) -> None:
        """Remember the verdict (as :func:`fetch_robots` gives it) for ``url``'s origin."""
        key = robots_url(url)
        kind = verdict.get("verdict")
        rules: Protego | bool = (Protego.parse(str(verdict.get("body", "")))
                                 if kind == "rules" else kind == "allow")
        self._rules[key] = (rules, str(verdict.get("note", "")))
        self._rules.move_to_end(key)
        while len(self._rules) > self._size:
            self._rules.popitem(last=False)

    def allowed(self, url: str) -> bool:
        """Whether the crawler may fetch ``url`` (its origin must be :meth:`known`)."""
        key = robots_url(url)
        rules = self._rules[key][0]
        self._rules.move_to_end(key)
        if isinstance(rules, bool):
            return rules
        return bool(rules.can_fetch(url, CRAWLER_AGENT))

    def note(self, url: str) -> str:
        """Why the host's robots.txt was read the way it was ('' when it simply had rules)."""
        return self._rules[robots_url(url)][1]
