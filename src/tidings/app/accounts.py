"""Accounts on APIs as sources: one line (``x:@handle``, ``wechat:<account id>``) each.

Adding an account is meant to be as easy as adding a feed, from the command
line, the web add page, an OPML outline or a file of hundreds; all of them come
through :func:`account_ref`, which asks the kinds which of them reads the line
(``Kind.account``). Each kind declares its cost class and first interval; a paid
account keeps its first interval until its first good check sets the one
R-SCHED-5 gives what it found (``pipeline.timing.first_check_interval``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tidings.errors import BadValueError, ConfigError
from tidings.model import SourceKind
from tidings.readers import account_forms, account_refusal, kind_of, parse_account

_WEB = re.compile(r"^https?://", re.IGNORECASE)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class AccountRef:
    """An account as a source: its kind, the URL stored for it, its config."""

    kind: SourceKind
    url: str
    name: str
    config: dict[str, Any] = field(default_factory=dict)
    id_prefix: str = ""

    @property
    def source_id(self) -> str:
        return f"{self.id_prefix or self.kind}-{self.name.lower()}"


def account_ref(text: str) -> AccountRef | None:
    """An account line some kind reads (``x:@handle``, an x.com profile URL,
    ``wechat:<id>``...); else None."""
    found = parse_account(text)
    if found is None:
        return None
    kind, account = found
    return AccountRef(kind.name, account.url, account.name, dict(account.config), kind.id_prefix)


def check_address(text: str) -> None:
    """Refuse what can never be added as a feed or an account, saying the rule it
    breaks: ``x:@bad!`` (the handle rule, not "only http and https URLs are
    fetched"), ``ftp://…``. BadValueError: the person typed it (CLI exit 2)."""
    text = text.strip()
    refused = account_refusal(text)
    if refused is not None:
        raise BadValueError(refused)
    if _SCHEME.match(text) and not _WEB.match(text):
        raise BadValueError(f"{text}: only http(s) pages and feeds, "
                            f"{' and '.join(account_forms())} can be added")


def first_interval(kind: SourceKind, default_interval: int) -> int:
    """The first interval of a new source of ``kind``: its own, else the settings'."""
    return kind_of(kind).first_interval_min or default_interval


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
        raise ConfigError(f"not an account ({' or '.join(account_forms())}): {shown}")
    return refs
