"""Charset rules (R-HTTP-5), each case served by a real server and decoded from the Response."""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from netservers import body_app, serve
from tidings.net import Fetcher, decode_body, decode_text
from tidings.net.charset import codec_for, declared_charset
from tidings.settings import Settings
from tidings.textutil import collapse_fffd

# Text of our own, long enough for detection to be sure.
ZH = (
    "本周的新闻摘要：城市图书馆延长了开放时间，周末也可以借阅。"
    "天气预报说下周会有大雨，请市民出门记得带伞。"
    "学校将在九月举办科学展览，欢迎家长和学生一起参加。"
)
RONG = "朱镕基"  # 镕 is in GBK but not in GB2312
EXT_B = "\U00020000"  # only GB18030 (four bytes) can carry it


def _case(
    body: bytes, content_type: str, expected: str
) -> tuple[bytes, dict[str, str], str]:
    return body, {"Content-Type": content_type}, expected


CASES = {
    "header charset": _case(ZH.encode("gbk"), "text/html; charset=GBK", ZH),
    "gb2312 label read as gbk": _case(
        RONG.encode("gbk"), "text/plain; charset=gb2312", RONG
    ),
    "gbk label read as gb18030": _case(
        (ZH + EXT_B).encode("gb18030"), "text/plain; charset=gbk", ZH + EXT_B
    ),
    "meta charset": _case(
        b'<html><head><meta charset="gb2312"><title>t</title></head><body>'
        + RONG.encode("gbk") + b"</body></html>",
        "text/html",
        f'<html><head><meta charset="gb2312"><title>t</title></head><body>{RONG}</body></html>',
    ),
    "http-equiv": _case(
        b'<html><head><meta http-equiv="Content-Type" content="text/html; charset=GBK">'
        b"</head><body>" + ZH.encode("gbk") + b"</body></html>",
        "text/html",
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=GBK">'
        f"</head><body>{ZH}</body></html>",
    ),
    "xml declaration": _case(
        b'<?xml version="1.0" encoding="GB2312"?><rss><title>'
        + RONG.encode("gbk") + b"</title></rss>",
        "application/rss+xml",
        f'<?xml version="1.0" encoding="GB2312"?><rss><title>{RONG}</title></rss>',
    ),
    "header beats meta": _case(
        b'<meta charset="gbk">' + ZH.encode("utf-8"), "text/html; charset=utf-8",
        '<meta charset="gbk">' + ZH,
    ),
    "detection": _case(ZH.encode("gb18030") * 3, "text/plain", ZH * 3),
    "utf-8 without any label": _case(ZH.encode("utf-8"), "text/plain", ZH),
    "utf-8 bom beats header": _case(
        codecs.BOM_UTF8 + "café".encode(), "text/plain; charset=iso-8859-1", "café"
    ),
    "utf-16 bom": _case(codecs.BOM_UTF16_LE + ZH.encode("utf-16-le"), "text/plain", ZH),
    "utf-16 in meta means utf-8": _case(
        b'<meta charset="utf-16">' + "é".encode(), "text/html", '<meta charset="utf-16">é'
    ),
    "latin-1 label read as cp1252": _case(
        b"\x93quoted\x94", "text/plain; charset=ISO-8859-1", "\u201cquoted\u201d"
    ),
    "unknown label falls through": _case(
        ZH.encode("utf-8"), "text/plain; charset=x-no-such-thing", ZH
    ),
    "runs of U+FFFD collapse": _case(
        b"abc\xff\xfe\xfd\xfc def \xff", "text/plain; charset=utf-8", "abc\ufffd def \ufffd"
    ),
}


@pytest.fixture
async def fetcher(settings: Settings) -> AsyncIterator[Fetcher]:
    async with Fetcher(settings) as f:
        yield f


@pytest.mark.parametrize("name", list(CASES))
async def test_served_body_decodes(fetcher: Fetcher, name: str) -> None:
    body, headers, expected = CASES[name]
    async with serve(body_app(body, headers)) as base:
        resp = await fetcher.fetch(f"{base}/doc")
    assert resp.content == body
    assert decode_body(resp) == expected


def test_gb2312_strict_would_fail_where_the_superset_succeeds() -> None:
    """Guards the case above from passing by accident."""
    with pytest.raises(UnicodeDecodeError):
        RONG.encode("gbk").decode("gb2312")
    assert decode_text(RONG.encode("gbk"), "text/plain; charset=gb2312") == RONG


@pytest.mark.parametrize(
    ("label", "codec"),
    [("GB2312", "gb18030"), ("gbk", "gb18030"), ("x-gbk", "gb18030"), ("cp936", "gb18030"),
     ("UTF8", "utf-8"), ("'utf-8'", "utf-8"), ("big5", "big5hkscs"), ("nonsense", None),
     (None, None)],
)
def test_labels_map_to_codecs(label: str | None, codec: str | None) -> None:
    assert codec_for(label) == codec


def test_declaration_is_only_looked_for_near_the_start() -> None:
    late = b" " * 5000 + b'<meta charset="gbk">'
    assert declared_charset(late) is None
    assert declared_charset(b"<?xml version='1.0' encoding='big5'?><x/>") == "big5hkscs"


@given(st.text(alphabet=st.sampled_from("a\ufffd中 \U00020000"), max_size=30))
def test_replacement_runs_collapse_to_one_whatever_the_text(text: str) -> None:
    """The shortcut for text without a run (the usual page) changes no answer."""
    assert collapse_fffd(text) == re.sub("\ufffd{2,}", "\ufffd", text)
