"""The parser's fast paths give what the slow, general way gives.

Each shortcut taken for speed (reference decoding with str.replace, images and
text by regular expressions, text from prefixes, broken documents fixed on the
bytes) is checked against a reference: the standard library, lxml's HTML
parser, the whole fragment, and the full repair ladder.
"""

from __future__ import annotations

import contextlib
import html
from html.entities import html5
from pathlib import Path

import lxml.html
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from tidings.errors import ParseError
from tidings.readers.rss import parse as parse_module
from tidings.readers.rss import parse_feed
from tidings.readers.rss.cdata import lift as lift_cdata
from tidings.readers.rss.entry import EntryFields
from tidings.readers.rss.text import (
    MAX_IMAGES,
    body_images,
    html_to_text,
    resolve,
    text_prefix,
    unescape,
)
from tidings.readers.rss.xmlfeed import feed_format, read_tree

BASE = "https://site.example/blog/post"

# references: common ones, named without ";", numeric in every shape, invalid code points
_REFS = ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;", "&#039;", "&nbsp;", "&hellip;", "&#8217;",
         "&#x2019;", "&#X27;", "&amp", "&lt", "&copy", "&ampx;", "&#38;", "&#x26;", "&AMP;",
         "&#0;", "&#1;", "&#128;", "&#xD800;", "&#1114112;", "&notit;", "&notin;", "&;", "&#;",
         "&#x;", "& ", "&&", "&" + "a" * 40 + ";", *sorted(html5)[::97]]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_REFS), st.text(alphabet="ab ;#x&<>9", max_size=6)),
                max_size=30))
def test_unescape_is_html_unescape(parts: list[str]) -> None:
    text = "".join(parts)
    assert unescape(text) == html.unescape(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_unescape_on_any_text(text: str) -> None:
    assert unescape(text) == html.unescape(text)


_WORD = st.text(alphabet="abcdefghij KLM\n\t,.éü中文", min_size=1, max_size=12)
_INLINE = st.sampled_from(["b", "i", "em", "strong", "span", "a", "code"])
_BLOCK = st.sampled_from(["p", "div", "li", "h2", "blockquote"])


@st.composite
def fragments(draw: st.DrawFn) -> str:
    """Well-formed HTML made of text, inline and block elements and <br> (no entities)."""
    out = []
    for _ in range(draw(st.integers(1, 40))):
        kind = draw(st.integers(0, 3))
        word = draw(_WORD).replace("<", "").replace("&", "")
        if kind == 0:
            out.append(word)
        elif kind == 1:
            tag = draw(_INLINE)
            out.append(f'<{tag} class="c">{word}</{tag}>')
        elif kind == 2:
            tag = draw(_BLOCK)
            out.append(f"<{tag}>{word}</{tag}>")
        else:
            out.append("<br/>")
    return "".join(out)


def lxml_text(fragment: str) -> str:
    root = lxml.html.fragment_fromstring(fragment, create_parent="div")
    return str(root.text_content())


def squeeze(text: str) -> str:
    """Text without any whitespace: tags become spaces for us, nothing for lxml."""
    return "".join(text.split())


@settings(max_examples=200, deadline=None)
@given(fragments())
def test_html_to_text_has_the_text_lxml_finds(fragment: str) -> None:
    ours = html_to_text(fragment)
    assert squeeze(ours) == squeeze(lxml_text(fragment))
    assert ours == ours.strip() and "  " not in ours


@settings(max_examples=200, deadline=None)
@given(fragments(), st.integers(5, 300))
def test_text_prefix_is_the_start_of_the_whole_text(fragment: str, need: int) -> None:
    whole = html_to_text(fragment)
    prefix = text_prefix(fragment, need)
    if len(whole) <= need:
        assert prefix == whole
    else:
        assert len(prefix) > need
        assert prefix[:need] == whole[:need]


def test_text_prefix_never_ends_in_a_cut_tag() -> None:
    words = "word " * 170  # 850 characters, so the 900-character prefix ends in the tag
    fragment = f'<p>{words}<img src="https://site.example/{"x" * 80}.png" alt="a"> after</p>'
    text = text_prefix(fragment, 850)
    assert "<" not in text
    assert text.endswith("after")


_IMG_ATTRS = st.fixed_dictionaries(
    {},
    optional={
        "src": st.sampled_from(["https://cdn.example/a.png", "/rel/b.jpg", "c.gif", "",
                                "data:image/png;base64,AAAA", "https://cdn.example/q?a=1&amp;b=2"]),
        "data-src": st.sampled_from(["https://cdn.example/lazy.png", "", "lazy.webp"]),
        "data-original": st.sampled_from(["https://cdn.example/orig.png", ""]),
        "width": st.sampled_from(["1", "600", "&#49;"]),
        "height": st.sampled_from(["1", "400"]),
        "alt": st.sampled_from(["", "a photo", "src=x.png"]),
    },
)


def lxml_images(fragment: str, base: str) -> list[str]:
    """The rules of body_images, applied to what lxml's HTML parser found."""
    found: list[str] = []
    root = lxml.html.fragment_fromstring(fragment, create_parent="div")
    for img in root.iter("img"):
        if img.get("width") == "1" or img.get("height") == "1":
            continue
        src = img.get("src") or ""
        if not src or src.startswith("data:"):
            src = img.get("data-src") or img.get("data-original") or ""
        url = resolve(base, src)
        if url and len(found) < MAX_IMAGES:
            found.append(url)
    return found


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_IMG_ATTRS, _WORD, st.booleans()), max_size=9))
def test_body_images_are_the_images_lxml_finds(images: list[tuple[dict[str, str], str, bool]]
                                               ) -> None:
    parts = []
    for attrs, word, quote_single in images:
        quote = "'" if quote_single else '"'
        rendered = " ".join(f"{k}={quote}{v}{quote}" for k, v in attrs.items())
        parts.append(f"<p>{html.escape(word)}</p><img {rendered}>")
    fragment = "".join(parts)
    assert body_images(fragment, BASE) == lxml_images(fragment, BASE)


def test_upper_case_img_tags_count_only_without_lower_case_ones() -> None:
    assert body_images('<IMG SRC="https://a.example/1.png">', BASE) == [
        "https://a.example/1.png"]
    mixed = '<IMG SRC="https://a.example/1.png"><img src="https://a.example/2.png">'
    assert body_images(mixed, BASE) == ["https://a.example/2.png"]
    assert body_images("<Iframe src='x'></Iframe><p>no images</p>", BASE) == []


# ------------------------------------------------------------ broken documents

def _feed(items: int, extra: str = "") -> bytes:
    entries = "".join(
        f"<item><title>Post {i}{extra}</title><link>https://e.example/{i}</link>"
        f"<description><![CDATA[<p>Body {i} &amp; more</p>]]></description>"
        f"<pubDate>Mon, 0{i % 9 + 1} Jan 2024 10:00:00 GMT</pubDate></item>"
        for i in range(items)
    )
    return (f'<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
            f"<title>T</title>\n{entries}\n</channel></rss>\n").encode()


def _strict_error(content: bytes) -> etree.XMLSyntaxError:
    try:
        etree.fromstring(content, parse_module._parser(recover=False))
    except etree.XMLSyntaxError as exc:
        return exc
    raise AssertionError("the document was meant to be broken")


def _full_ladder(content: bytes, url: str) -> tuple[list[object], list[str]]:
    """What the repair ladder (without the quick fix) makes of a broken document."""
    error = parse_module._first_error(_strict_error(content))
    feed, warnings = parse_module._parse_broken(content, url, None, error)
    finished = parse_module._finish(feed, url, warnings)
    return list(finished.items), list(finished.warnings)


@pytest.mark.parametrize("content", [
    _feed(5, extra="\x02 and \x1b"),  # control characters in the text
    _feed(5) + b"<script>var x = 1;</script>\n",  # something appended after the feed
    _feed(5) + b"\n\n<!-- cache -->\n<html><body>x</body></html>",
    _feed(3).replace(b"</rss>\n", b"</rss><div>on the same line</div>\n"),
])
def test_quick_fixes_match_the_full_repair_ladder(content: bytes) -> None:
    url = "https://e.example/feed"
    assert parse_module._quick_fix(content, url, _strict_error(content)) is not None
    feed = parse_feed(content, url=url)
    items, warnings = _full_ladder(content, url)
    assert list(feed.items) == items
    assert list(feed.warnings) == warnings
    assert feed.items and feed.warnings[0].startswith("not well-formed XML")


def test_control_characters_in_utf16_take_the_full_ladder() -> None:
    content = _feed(2, extra="\x02").decode().replace('encoding="utf-8"', 'encoding="utf-16"')
    feed = parse_feed(content.encode("utf-16"), url="https://e.example/feed")
    assert [i.title for i in feed.items] == ["Post 0", "Post 1"]
    assert "control characters removed" in feed.warnings


# ------------------------------------------------------------ lifted CDATA bodies

BODY = "<p>" + "Long paragraph with <b>markup</b> &amp; an entity, " * 20 + "</p>"


def _both_ways(content: bytes) -> tuple[list[EntryFields], list[EntryFields]]:
    """Entries read with the CDATA bodies lifted, and read from libxml2's own tree."""
    url = "https://e.example/feed"
    root, sections = parse_module._lifted_or_none(content, url)
    assert root is not None and sections, "nothing was lifted"
    lifted, _ = parse_module._parse_xml(content, url, None)
    plain_root = etree.fromstring(content, parse_module._parser(recover=False))
    fmt = feed_format(plain_root)
    assert fmt is not None
    plain = read_tree(plain_root, fmt, url=url, xml_base=False)
    return list(lifted.entries), list(plain.entries)


def _rss(*descriptions: str) -> bytes:
    items = "".join(f"<item><title>t{i}</title><description>{d}</description>"
                    f"<content:encoded>\n  <![CDATA[{BODY}]]>\n</content:encoded></item>"
                    for i, d in enumerate(descriptions))
    return ('<?xml version="1.0" encoding="utf-8"?><rss version="2.0" xmlns:content='
            f'"http://purl.org/rss/1.0/modules/content/"><channel><title>c</title>{items}'
            "</channel></rss>" + " " * 8192).encode()


@pytest.mark.parametrize("description", [
    f"<![CDATA[{BODY}]]>",
    f"<![CDATA[{BODY}\r\nwindows\rmac line ends]]>",
    f"<![CDATA[{BODY} 中文 ü \U0001f600]]>",
    f"<![CDATA[{BODY} <!-- a comment --> ]]>",
    f"before <![CDATA[{BODY}]]> after",  # mixed content: not lifted, still equal
    f"<p>child</p><![CDATA[{BODY}]]>",  # markup around it: serialized, not lifted
])
def test_lifted_cdata_reads_like_libxml2(description: str) -> None:
    lifted, plain = _both_ways(_rss(description, f"<![CDATA[{BODY}]]>"))
    assert lifted == plain


def test_atom_text_content_in_cdata_stays_escaped() -> None:
    entry = (f'<entry><title>a</title><content type="text"><![CDATA[{BODY}]]></content>'
             f'<summary type="html"><![CDATA[{BODY}]]></summary></entry>')
    content = (f'<feed xmlns="http://www.w3.org/2005/Atom"><title>f</title>{entry}</feed>'
               + " " * 8192).encode()
    lifted, plain = _both_ways(content)
    assert lifted == plain
    assert "&lt;p&gt;" in plain[0].content and plain[0].description.startswith("<p>")


def test_cdata_that_libxml2_rejects_is_not_lifted() -> None:
    bad = _rss(f"<![CDATA[{BODY}\x01]]>")
    _, sections = lift_cdata(bad)
    assert len(sections) == 1  # only the content:encoded body; the broken one stays put
    feed = parse_feed(bad, url="https://e.example/feed")
    assert "control characters removed" in feed.warnings


def test_a_section_opened_inside_a_comment_is_not_lifted() -> None:
    commented = _rss("x", "y").replace(
        b"<channel>", b"<channel><!-- <description><![CDATA[ -->", 1)
    lifted, sections = lift_cdata(commented)
    # from the comment to the first body's end nothing is lifted; the second body is
    assert len(sections) == 1 and b"<!-- <description><![CDATA[ -->" in lifted
    assert len(parse_feed(commented, url="https://e.example/feed").items) == 2


def test_documents_with_private_use_markers_are_left_alone() -> None:
    marked = _rss(f"<![CDATA[{BODY} \ue000 ]]>")
    assert lift_cdata(marked) == (marked, [])


def test_lifting_changes_nothing_on_the_real_world_corpus(shared_dir: Path) -> None:
    feeds = sorted((shared_dir / "eval" / "feeds").glob("*.*"))
    lifted_files = 0
    for path in feeds:
        content = path.read_bytes()
        root, _ = parse_module._lifted_or_none(content, "https://e.example/feed")
        if root is None:
            continue
        lifted_files += 1
        lifted, plain = _both_ways(content)
        assert lifted == plain, path.name
    assert lifted_files >= 10


_BIG = _rss(f"<![CDATA[{BODY}]]>", f"<![CDATA[{BODY}\r\n]]>", "plain &amp; text")


@settings(max_examples=150, deadline=None)
@given(st.integers(0, len(_BIG)), st.integers(0, len(_BIG)),
       st.sampled_from([b"", b"]]>", b"<![CDATA[", b"<!--", b"-->", b"\x01", b"\xff", b"</"]))
def test_mangled_big_feeds_read_alike_with_and_without_lifting(
    cut: int, at: int, insert: bytes
) -> None:
    """Whatever is inserted or cut off, lifting never changes what a strict parse yields."""
    content = _BIG[:at] + insert + _BIG[at:cut] if at < cut else _BIG[:cut]
    url = "https://e.example/feed"
    with contextlib.suppress(ParseError):
        parse_feed(content, url=url)
    root, _ = parse_module._lifted_or_none(content, url)
    if root is None:
        return
    try:
        plain_root = etree.fromstring(content, parse_module._parser(recover=False))
    except etree.XMLSyntaxError:
        raise AssertionError("the lifted document parsed, the original does not") from None
    fmt = feed_format(plain_root)
    if fmt is None:
        return
    lifted, _ = parse_module._parse_xml(content, url, None)
    plain = read_tree(plain_root, fmt, url=url, xml_base=False)
    assert lifted.entries == plain.entries
