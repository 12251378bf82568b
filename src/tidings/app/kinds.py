"""Source kinds as the CLI and the web offer and check them.

Those layers may not import the readers, and no layer above them names a kind:
they ask here, and this asks the kinds' own records (``tidings.readers``).
"""

from __future__ import annotations

from tidings.errors import ConfigError
from tidings.model import Source, SourceKind
from tidings.readers import (
    account_forms,
    all_kinds,
    feed_kind,
    kind_of,
    parse_account,
    proposed_kind,
)


def kind_names(*, fetched_only: bool = False) -> list[str]:
    """Every known kind's name (only those read from an address with ``fetched_only``)."""
    return [k.name for k in all_kinds() if k.fetched or not fetched_only]


def default_kind() -> SourceKind:
    """The kind of a new source named by a feed's (or a page's) address."""
    return feed_kind()


def page_kind() -> SourceKind:
    """The kind a page's proposed list rules are for (a page without a feed)."""
    return proposed_kind()


def is_fetched(source: Source) -> bool:
    """Whether the source is collected from its address (not only pushed to)."""
    try:
        return kind_of(source.kind).fetched
    except ConfigError:  # its kind is no longer installed: nothing can read it
        return False


def facts(source: Source) -> list[tuple[str, str]]:
    """What the source's kind shows of its cursor (label, text), for its page."""
    try:
        return kind_of(source.kind).facts(source.cursor)
    except ConfigError:
        return []


def account_kinds() -> list[str]:
    """The kinds whose sources are accounts named by a line (``x:@handle``...)."""
    return [k.name for k in all_kinds() if k.account is not None]


def unfetched_kinds() -> list[str]:
    """The kinds that are pushed to, never collected (no "Collect now" for them)."""
    return [k.name for k in all_kinds() if not k.fetched]


def check_address(source: Source, url: str) -> None:
    """ConfigError (naming the field) when ``url`` may not become the source's address."""
    fixed = kind_of(source.kind).fixed_url
    if fixed is not None:
        if url != source.url:
            raise ConfigError(f"url: {fixed}")
    elif not url.lower().startswith(("http://", "https://")):
        raise ConfigError("url: must start with http:// or https://")


def importable(url: str) -> bool:
    """Whether an imported address (an OPML ``xmlUrl``) is a page or an account line."""
    return url.lower().startswith(("http://", "https://")) or parse_account(url) is not None


def import_forms() -> str:
    """What an imported address must be, for the note on one that is not."""
    return f"neither an http(s) URL nor an account ({account_lines()})"


def account_lines() -> str:
    """The account lines the kinds read, for a message (``x:@handle, wechat:<id>``)."""
    return ", ".join(account_forms())
