"""URL normalization (R-DEDUP-2) and relative-link resolution.

Normalization exists so that one article reached through different spellings of
its address (tracking parameters, upper-case host, default port, shuffled query,
``%7e`` vs ``~``) gets one identity key. It must be idempotent, because keys
computed today are compared with keys computed from already-normalized URLs
stored years ago. It must never raise: a URL we cannot understand is still a
usable key as it was given, so such input comes back stripped and otherwise
unchanged.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterable
from urllib.parse import SplitResult, urljoin, urlsplit

__all__ = ["DEFAULT_TRACKING", "is_http_url", "normalize_url", "resolve_url", "url_fragment"]

#: Exact query parameter names (lower-case) that only say where a click came from.
DEFAULT_TRACKING: frozenset[str] = frozenset(
    {"spm", "from", "ref", "fbclid", "gclid", "mc_cid", "mc_eid"}
)
_TRACKING_PREFIXES: tuple[str, ...] = ("utm_",)

_DEFAULT_PORTS = {"http": "80", "https": "443"}
_HEX = "0123456789ABCDEFabcdef"
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_SUB_DELIMS = "!$&'()*+,;="
# Characters each component may carry literally (RFC 3986); the rest is escaped.
_PATH_SAFE = frozenset(_UNRESERVED | set(_SUB_DELIMS) | set(":@/"))
_QUERY_SAFE = frozenset(_PATH_SAFE | set("?"))
_USER_SAFE = frozenset(_UNRESERVED | set(_SUB_DELIMS) | set(":"))
_HOST_RE = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?")
_ESCAPE_RE = re.compile(r"%([0-9A-Fa-f]{2})")


def is_http_url(url: str) -> bool:
    """True for an absolute http(s) URL with a host (the only kind we key by)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme in _DEFAULT_PORTS and bool(parts.netloc)


def _norm_component(text: str, safe: frozenset[str]) -> str:
    """Canonical percent-encoding: unreserved decoded, other escapes upper-case,
    everything not allowed literally in the component escaped as UTF-8."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "%" and i + 2 < n and text[i + 1] in _HEX and text[i + 2] in _HEX:
            decoded = chr(int(text[i + 1 : i + 3], 16))
            out.append(decoded if decoded in _UNRESERVED else "%" + text[i + 1 : i + 3].upper())
            i += 3
            continue
        if ch in safe:
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        i += 1
    return "".join(out)


def _fast_component(text: str, safe: frozenset[str]) -> str:
    """Skip the per-character walk for the common already-clean component."""
    if "%" not in text and safe.issuperset(text):
        return text
    return _norm_component(text, safe)


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4, so ``/a/./b/../c`` and ``/a/c`` are one address."""
    if "." not in path:
        return path
    out: list[str] = []
    segments = path.split("/")
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if seg == ".":
            if last:
                out.append("")
        elif seg == "..":
            if len(out) > 1:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(seg)
    result = "/".join(out)
    return result if result.startswith("/") else "/" + result


def _norm_host(host: str) -> str | None:
    """Lower-case ASCII (IDNA) host, or None when it is not a host name at all."""
    if host.startswith("["):
        # Validated but kept as written: str() of mapped addresses differs
        # between Python versions, and keys must not change on an upgrade.
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return None
        return host.lower()
    host = host.lower()
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    return host if _HOST_RE.fullmatch(host) else None


def _split_netloc(netloc: str) -> tuple[str, str, str] | None:
    """(userinfo, host, port) from ``user@host:port``; None when malformed."""
    userinfo, _, hostport = netloc.rpartition("@")
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            return None
        host, rest = hostport[: end + 1], hostport[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port = rest[1:]
    else:
        host, _, port = hostport.partition(":")
    if port and not (port.isascii() and port.isdigit() and int(port) <= 65535):
        return None
    return userinfo, host, port.lstrip("0") or ("0" if port else "")


def _is_tracking(name: str, extra: frozenset[str], extra_prefixes: tuple[str, ...]) -> bool:
    if "%" in name:
        name = _ESCAPE_RE.sub(lambda m: chr(int(m.group(1), 16)), name)
    key = name.lower()
    return (
        key in DEFAULT_TRACKING
        or key in extra
        or key.startswith(_TRACKING_PREFIXES)
        or (bool(extra_prefixes) and key.startswith(extra_prefixes))
    )


@functools.lru_cache(maxsize=64)
def _tracking_rules(extra_tracking: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """A source's extra tracking names as a set and the prefixes among them
    (``utm_*``), made once per source setting instead of once per URL."""
    extra = frozenset(t.strip().lower() for t in extra_tracking if t.strip())
    return extra, tuple(t[:-1] for t in extra if t.endswith("*"))


def _norm_query(query: str, extra_tracking: tuple[str, ...]) -> str:
    extra, prefixes = _tracking_rules(extra_tracking)
    kept: list[str] = []
    for part in query.split("&"):
        if not part:
            continue
        name, eq, value = part.partition("=")
        if _is_tracking(name, extra, prefixes):
            continue
        kept.append(_fast_component(name, _QUERY_SAFE) + eq + _fast_component(value, _QUERY_SAFE))
    kept.sort()
    return "&".join(kept)


def _norm_netloc(parts: SplitResult) -> str | None:
    split = _split_netloc(parts.netloc)
    if split is None:
        return None
    userinfo, raw_host, port = split
    host = _norm_host(raw_host)
    if not host:
        return None
    netloc = host
    if port and port != _DEFAULT_PORTS[parts.scheme]:
        netloc = f"{host}:{port}"
    if userinfo:
        netloc = _fast_component(userinfo, _USER_SAFE) + "@" + netloc
    return netloc


def normalize_url(url: str, extra_tracking: Iterable[str] = ()) -> str:
    """The canonical spelling of an http(s) URL (R-DEDUP-2).

    ``extra_tracking`` adds parameter names to drop (case-insensitive); a name
    ending in ``*`` drops every parameter starting with the rest. Input that is
    not an absolute http(s) URL with a valid host is returned stripped.
    """
    return _normalize(url, tuple(extra_tracking))


# A pure function asked twice for every entry (its stored URL, then its identity key)
# and again for every unchanged listing: remembering recent answers halves its cost.
@functools.lru_cache(maxsize=8192)
def _normalize(url: str, extra_tracking: tuple[str, ...]) -> str:
    text = url.strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    if parts.scheme not in _DEFAULT_PORTS or not parts.netloc:
        return text
    netloc = _norm_netloc(parts)
    if netloc is None:
        return text
    path = _remove_dot_segments(_fast_component(parts.path, _PATH_SAFE)) or "/"
    if path != "/":
        path = path.rstrip("/") or "/"
    query = _norm_query(parts.query, extra_tracking) if parts.query else ""
    return f"{parts.scheme}://{netloc}{path}" + (f"?{query}" if query else "")


def url_fragment(url: str) -> str:
    """The fragment of ``url`` (without ``#``), percent-encoding normalized; "" if none.

    :func:`normalize_url` drops it; the batch identity rule (``keys.batch_keys``)
    puts it back where it is all that tells two entries apart. Normalized the way a
    query is (RFC 3986 allows the same characters), so ``url_fragment`` of a URL
    built from its own output gives that output again.
    """
    if "#" not in url:
        return ""
    try:
        fragment = urlsplit(url.strip()).fragment
    except ValueError:
        return ""
    return _fast_component(fragment, _QUERY_SAFE) if fragment else ""


def resolve_url(base: str, href: str) -> str | None:
    """``href`` made absolute against ``base``; None unless the result is http(s).

    Links like ``javascript:``, ``mailto:`` or an empty ``href`` are not
    addresses we could ever fetch, so they resolve to nothing. The fragment is
    dropped (it never reaches the server).
    """
    href = href.strip(" \t\n\r\f")
    if not href or href.startswith("#"):
        return None
    try:
        joined = urljoin(base.strip(), href)
        parts = urlsplit(joined)
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return parts._replace(fragment="").geturl()
