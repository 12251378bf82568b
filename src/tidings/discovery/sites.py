"""What "one site" is, for blogrolls and the crawler (R-DISC-2, R-DISC-3).

A site is usually a registrable domain (``blog.example.co.uk`` and
``www.example.co.uk`` are one site; the public suffix list, through the
``tld`` package, knows where the suffix ends). Blog hosts break that rule:
on ``*.tumblr.com`` every sub-domain is someone else's site, and on
``cnblogs.com/alice`` or ``medium.com/@bob`` the first path segment is. Those
hosts are listed here, because no list of them is published.
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from urllib.parse import urlsplit

from tld import get_fld

__all__ = ["is_homepage_like", "paths_stay_home", "site_key", "site_root"]

#: hosts whose sub-domains are each a separate site
_TENANT_DOMAINS = (
    "blogspot.com", "wordpress.com", "tumblr.com", "substack.com", "ghost.io", "medium.com",
    "github.io", "gitlab.io", "netlify.app", "pages.dev", "vercel.app", "bearblog.dev",
    "lofter.com", "blog.163.com", "blog.sohu.com", "home.blog", "hatenablog.com",
    "micro.blog", "write.as", "livejournal.com", "neocities.org",
)
#: hosts where a site is a path prefix: host -> the pattern of that prefix
_PATH_SITES: dict[str, re.Pattern[str]] = {
    host: re.compile(pattern) for host, pattern in {
        "medium.com": r"^/@[^/]+",
        "www.cnblogs.com": r"^/[^/]+",
        "cnblogs.com": r"^/[^/]+",
        "blog.csdn.net": r"^/[^/]+",
        "www.jianshu.com": r"^/u/[^/]+",
        "juejin.cn": r"^/user/[^/]+",
        "segmentfault.com": r"^/u/[^/]+",
        "www.zhihu.com": r"^/people/[^/]+",
        "zhuanlan.zhihu.com": r"^/[^/]+",
        "blog.sina.com.cn": r"^/[^/]+",
        "my.oschina.net": r"^/[^/]+",
        "hi.baidu.com": r"^/[^/]+",
        "github.com": r"^/[^/]+",
        "bsky.app": r"^/profile/[^/]+",
        "www.youtube.com": r"^/(?:@[^/]+|channel/[^/]+|c/[^/]+|user/[^/]+)",
        "youtube.com": r"^/(?:@[^/]+|channel/[^/]+|c/[^/]+|user/[^/]+)",
        "mastodon.social": r"^/@[^/]+",
    }.items()
}
#: a Mastodon-style profile on any server: ``/@name``
_FEDI_PROFILE = re.compile(r"^/@[A-Za-z0-9_.-]+/?$")


@lru_cache(maxsize=8192)
def _domain(host: str) -> str:
    """The registrable domain of ``host`` (the host itself for addresses and unknown suffixes)."""
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    else:
        return host
    for tenant in _TENANT_DOMAINS:
        if host.endswith("." + tenant) and host != "www." + tenant:
            return host
    fld = get_fld(f"http://{host}/", fail_silently=True)
    if isinstance(fld, str) and fld:
        return fld
    labels = host.split(".")
    return ".".join(labels[-2:])


@lru_cache(maxsize=16384)
def site_key(url: str) -> str:
    """The site ``url`` belongs to, as ``domain`` or ``host/path-prefix`` ('' if not http)."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower().rstrip(".")
    except ValueError:
        return ""
    if parts.scheme not in ("http", "https") or not host:
        return ""
    pattern = _PATH_SITES.get(host)
    if pattern is not None:
        match = pattern.match(parts.path)
        return f"{host}{match.group(0).lower()}" if match else host
    if _FEDI_PROFILE.match(parts.path):
        return f"{host}{parts.path.rstrip('/').lower()}"
    return _domain(host)


def paths_stay_home(url: str) -> bool:
    """Whether every root-relative link without ``@`` (``/about/``) on the page at ``url``
    belongs to the page's own site: true unless its host is a path site or the page is
    a profile (there ``/tag/x`` is the host's site, not the page's)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    host = (parts.hostname or "").lower().rstrip(".")
    return (parts.scheme in ("http", "https") and bool(host) and host not in _PATH_SITES
            and not _FEDI_PROFILE.match(parts.path))


def site_root(url: str) -> str:
    """The site's home page: scheme, host and the path prefix of a path site."""
    parts = urlsplit(url)
    key = site_key(url)
    host = (parts.hostname or "").lower()
    prefix = key[len(host):] if key.startswith(host) and "/" in key else ""
    netloc = parts.netloc.lower().rpartition("@")[2]
    return f"{parts.scheme}://{netloc}{prefix}/"


def is_homepage_like(url: str) -> bool:
    """A site's front page or one level below it, without a query (R-DISC-2).

    Blogrolls link to home pages; a deep link with a query string is an
    article, a search or a tracking redirect.
    """
    parts = urlsplit(url)
    if parts.query:
        return False
    host = (parts.hostname or "").lower()
    key = site_key(url)
    prefix = key[len(host):] if key.startswith(host) and "/" in key else ""
    rest = parts.path[len(prefix):] if parts.path.lower().startswith(prefix) else parts.path
    return rest.strip("/").count("/") == 0
