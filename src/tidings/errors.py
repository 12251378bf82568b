"""The one exception tree of tidings.

Every error a caller may want to handle derives from :class:`TidingsError`, so
the CLI and the web layer can turn any of them into a one-line message without
ever showing a traceback. Errors about a URL carry it; errors about a source
carry its id. Driver and library errors are wrapped with ``raise ... from``.

The tree lives at layer 0 so that every layer can catch, say, a
:class:`FetchError` without importing ``tidings.net``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any


class TidingsError(Exception):
    """Root of every error tidings raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        # Subclasses take other arguments than ``args`` holds, so the default
        # (``cls(*args)``) cannot rebuild them: an error raised in a worker process
        # (a feed that fails to decode or parse) must cross back whole.
        return _rebuild, (type(self), self.args, dict(self.__dict__))


def _rebuild(cls: type[TidingsError], args: tuple[Any, ...],
             state: dict[str, Any]) -> TidingsError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class ConfigError(TidingsError):
    """A setting, a source config or a command argument is not acceptable."""


class BadValueError(ConfigError):
    """A value a person typed (an argument, an option, a form field) is not acceptable
    as written, or a file it names does not exist: nothing was tried.

    The CLI exits 2 for it (docs/cli.md) where a :class:`ConfigError` that arises
    while doing the work exits 1; the web answers 400 for both.
    """


class NoFeedError(ConfigError):
    """A page that was to be added has no feed (``tidings add`` then offers ``web_list``)."""


class NotFoundError(TidingsError):
    """A source, item or file that was asked for does not exist."""


class StorageError(TidingsError):
    """The database could not do what was asked (wraps driver errors)."""


class ReadOnlyError(StorageError):
    """The archive is opened read-only (its directory cannot be written): reads work,
    this write cannot."""


class TransactionLostError(StorageError):
    """The database rolled back a whole unit of work, not just the failing part of it.

    Some failures (disk full, I/O error, out of memory, an interrupt) undo the
    entire transaction, savepoints included. Nothing written in the unit so far
    is stored, and nothing more may be written in it: a further write would run
    outside any transaction and be committed on its own.
    """


class ParseError(TidingsError):
    """A document could not be read as what it claims to be (feed, JSON, OPML)."""

    def __init__(self, message: str, url: str | None = None) -> None:
        super().__init__(message)
        self.url = url


class BudgetExhaustedError(TidingsError):
    """Our own spending limit was reached; not a failure of the source (R-SCHED-3)."""

    #: whether a request went out before this was raised (our own budget: never)
    sent = False


class ProviderError(BudgetExhaustedError):
    """A paid API cannot serve anyone right now: key refused, balance used up, rate
    limited, down or answering garbage.

    It is the provider's trouble, not the source's: like a spent budget it leaves
    the sources' health alone and retries them soon, and the ledger reports it
    once per provider (and sends nothing more until ``retry_after``).
    """

    def __init__(self, provider: str, message: str,
                 retry_after: datetime | None = None, *, sent: bool = True) -> None:
        super().__init__(f"{provider}: {message}")
        self.provider = provider
        self.retry_after = retry_after
        #: False when the ledger held the call back (the trouble was known): a body's
        #: tries count only calls that were sent (R-WX-3)
        self.sent = sent


class AccountGoneError(TidingsError):
    """A paid API says an account cannot be read (closed, renamed, blocked): the
    source's own failure, unlike a :class:`ProviderError`."""


# --------------------------------------------------------------------------- fetch


class FetchError(TidingsError):
    """An outbound request failed. ``url`` is the URL that was being fetched."""

    #: short machine-readable kind, stored in fetch runs and shown in --json
    kind = "fetch"

    def __init__(self, url: str, message: str) -> None:
        super().__init__(message)
        self.url = url


class BlockedAddressError(FetchError):
    """The URL's scheme, host or resolved address is not allowed (SSRF guard)."""

    kind = "blocked"


class TooManyRedirectsError(FetchError):
    """More redirects than allowed, or a redirect loop."""

    kind = "redirects"


class BodyTooLargeError(FetchError):
    """The (decompressed) body exceeded the byte cap."""

    kind = "too_large"


class FetchTimeoutError(FetchError):
    """The request's total time budget ran out (DNS, redirects and body together)."""

    kind = "timeout"


class ConnectError(FetchError):
    """The connection could not be made or broke off (DNS, TCP, TLS, protocol)."""

    kind = "connect"


class HTTPStatusError(FetchError):
    """The server answered with an error status (4xx/5xx).

    ``retry_after`` is the instant the server asked us to wait for, when it did.
    """

    kind = "http"

    def __init__(
        self,
        url: str,
        message: str,
        status: int,
        retry_after: datetime | None = None,
    ) -> None:
        super().__init__(url, message)
        self.status = status
        self.retry_after = retry_after
