"""The ``wechat`` kind: WeChat official accounts read through a paid API (R-WX-1..3).

An account line is ``wechat:<account id>`` (``weixin:``, ``mp:`` too); the
source's address is that line, so it never changes (the account id is config).
New sources start at the 15-minute reconcile (R-WX-1); post pages are never
fetched for their bodies, which are bought through the API.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tidings.model import SourceKind
from tidings.readers import bodies
from tidings.readers.kind import Account, Kind, paid_list
from tidings.readers.wechat.reader import WechatReader

WECHAT = SourceKind("wechat")
_LINE = re.compile(r"^(?:wechat|weixin|mp):([^\s/]{1,100})$", re.IGNORECASE)


def account(text: str) -> Account | None:
    """``wechat:<account id>``; else None."""
    found = _LINE.match(text)
    if not found:
        return None
    name = found.group(1)
    return Account(f"wechat:{name}", name, {"account": name})


def facts(cursor: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The provider's balance as its last list answer gave it; bodies waiting."""
    balance = cursor.get("balance")
    if balance is None:
        return bodies.facts(cursor)
    return [("Provider balance", f"{balance} (as of the last list call)"), *bodies.facts(cursor)]


KIND = Kind(
    name=WECHAT, reader=WechatReader, summary="a WeChat official account, through a paid API",
    cost=paid_list, first_interval_min=15, fetch_bodies=False, own_hosts=("mp.weixin.qq.com",),
    account=account, account_form="wechat:<account id>", id_prefix="wx",
    fixed_url="a WeChat account keeps its address (set config.account)", opml=True,
    facts=facts,
)
