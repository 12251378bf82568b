"""Accounts on paid APIs as sources: ``x:@handle`` and ``wechat:<account id>``.

Adding an X or WeChat account is meant to be as easy as adding a feed, from
the command line, the web add page, an OPML outline or a file of hundreds; all
of them come through :func:`account_ref`. Such sources are paid lists (cost
class ``paid_list``, R-SCHED-5): X accounts start at the batch cadence, WeChat
accounts at the 15-minute reconcile (R-WX-1), until their first good check sets
the interval R-SCHED-5 gives what it found (``pipeline.timing.first_check_interval``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tidings.errors import BadValueError, ConfigError
from tidings.model import SourceKind

X_INTERVAL_MIN = 30
WECHAT_INTERVAL_MIN = 15
_X = re.compile(r"^(?:x:|twitter:)@?([A-Za-z0-9_]{1,15})$", re.IGNORECASE)
_X_URL = re.compile(r"^https?://(?:www\.|mobile\.)?(?:x|twitter)\.com/@?([A-Za-z0-9_]{1,15})/?$",
                    re.IGNORECASE)
_WECHAT = re.compile(r"^(?:wechat|weixin|mp):([^\s/]{1,100})$", re.IGNORECASE)
_ACCOUNT_PREFIX = re.compile(r"^(x|twitter|wechat|weixin|mp):", re.IGNORECASE)
_WEB = re.compile(r"^https?://", re.IGNORECASE)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_NOT_HANDLES = frozenset({"home", "i", "search", "explore", "settings", "intent", "share"})


@dataclass(frozen=True, slots=True)
class AccountRef:
    """An account as a source: its kind, the URL stored for it, its config."""

    kind: SourceKind
    url: str
    name: str
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def source_id(self) -> str:
        prefix = "x" if self.kind is SourceKind.X else "wx"
        return f"{prefix}-{self.name.lower()}"


def account_ref(text: str) -> AccountRef | None:
    """``x:@handle``, an x.com / twitter.com profile URL or ``wechat:<id>``; else None."""
    text = text.strip()
    found = _X.match(text) or _X_URL.match(text)
    if found and found.group(1).lower() not in _NOT_HANDLES:
        handle = found.group(1)
        return AccountRef(SourceKind.X, f"https://x.com/{handle}", handle, {"handle": handle})
    wx = _WECHAT.match(text)
    if wx:
        account = wx.group(1)
        return AccountRef(SourceKind.WECHAT, f"wechat:{account}", account, {"account": account})
    return None


def check_address(text: str) -> None:
    """Refuse what can never be added as a feed or an account, saying the rule it
    breaks: ``x:@bad!`` (the handle rule, not "only http and https URLs are
    fetched"), ``ftp://…``. BadValueError: the person typed it (CLI exit 2)."""
    text = text.strip()
    prefix = _ACCOUNT_PREFIX.match(text)
    if prefix is not None and account_ref(text) is None:
        if prefix.group(1).lower() in ("x", "twitter"):
            raise BadValueError(f"{text!r} is not an X account: a handle is 1 to 15 letters, "
                                "digits or _ (x:@handle)")
        raise BadValueError(f"{text!r} is not a WeChat account: write wechat:<account id> "
                            "(up to 100 characters, no spaces or /)")
    if prefix is None and _SCHEME.match(text) and not _WEB.match(text):
        raise BadValueError(f"{text}: only http(s) pages and feeds, x:@handle and "
                            "wechat:<account id> can be added")


def first_interval(kind: SourceKind, default_interval: int) -> int:
    """The first interval of a new source of ``kind`` (its cost class comes from
    ``pipeline.config.cost_class_of``, with the other kinds')."""
    if kind is SourceKind.X:
        return X_INTERVAL_MIN
    if kind is SourceKind.WECHAT:
        return WECHAT_INTERVAL_MIN
    return default_interval


def read_accounts(lines: Iterable[str]) -> list[AccountRef]:
    """A file of accounts, one a line (``#`` comments and blank lines ignored).

    Every bad line is named at once (ConfigError), so a file of hundreds is fixed
    in one go and nothing is added from a file with mistakes.
    """
    refs: list[AccountRef] = []
    bad: list[str] = []
    for n, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        ref = account_ref(text)
        if ref is None:
            bad.append(f"line {n}: {text[:60]!r}")
        else:
            refs.append(ref)
    if bad:
        shown = "; ".join(bad[:5]) + (f"; and {len(bad) - 5} more" if len(bad) > 5 else "")
        raise ConfigError(f"not an account (x:@handle or wechat:<id>): {shown}")
    return refs
