"""R-EXTRACT-3: nothing executable survives sanitize_html; structure does."""

from __future__ import annotations

import html
import re

import lxml.html
import nh3
import pytest

from tidings.extract import sanitize, sanitize_html

BASE = "https://news.example.com/2024/story.html"

XSS_CORPUS = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "<scr<script>ipt>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<img src=x onerror=alert(1)//>",
    '<body onload="alert(1)">',
    '<div onmouseover="alert(1)">hover</div>',
    '<p ONCLICK="alert(1)">click</p>',
    '<a href="javascript:alert(1)">x</a>',
    '<a href="JaVaScRiPt:alert(1)">x</a>',
    '<a href="java&#09;script:alert(1)">x</a>',
    '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>',
    '<a href=" javascript:alert(1)">x</a>',
    '<a href="vbscript:msgbox(1)">x</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
    '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">',
    '<img src="javascript:alert(1)">',
    "<svg><script>alert(1)</script></svg>",
    '<svg onload="alert(1)"><circle r="1"/></svg>',
    '<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
    '<math><maction actiontype="statusline" xlink:href="javascript:alert(1)">x</maction></math>',
    '<p style="width: expression(alert(1))">x</p>',
    '<p style="font-weight: expression(alert(1))">x</p>',
    '<p style="background: url(javascript:alert(1))">x</p>',
    '<p style="behavior: url(x.htc)">x</p>',
    '<p style="-moz-binding: url(x.xml#xss)">x</p>',
    '<p style="text-align: \\65 xpression(alert(1))">x</p>',
    '<iframe src="https://evil.example/"></iframe>',
    '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>',
    '<form action="https://evil.example/"><input name="q"><button>go</button></form>',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    '<base href="https://evil.example/">',
    '<object data="https://evil.example/x.swf"></object>',
    '<embed src="https://evil.example/x.swf">',
    '<link rel="stylesheet" href="https://evil.example/x.css">',
    "<style>body{background:url(javascript:alert(1))}</style>",
    '<video><source onerror="alert(1)"></video>',
    '<details open ontoggle="alert(1)">x</details>',
    "<!--[if gte IE 4]><script>alert(1)</script><![endif]-->",
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    '<table background="javascript:alert(1)"><tr><td>x</td></tr></table>',
    '<a href="https://ok.example/" target="_blank" ping="https://evil.example/">x</a>',
    '<img src="https://ok.example/a.png" srcset="javascript:alert(1) 1x">',
]

_EXECUTABLE = re.compile(
    r"<\s*(script|iframe|frame|object|embed|form|input|button|meta|base|link|style|svg|math)\b"
    r"|\son\w+\s*="
    r"|javascript:|vbscript:|data:|expression\s*\(|url\s*\(|srcdoc|srcset|xlink|ping=|\\65",
    re.IGNORECASE,
)


@pytest.mark.parametrize("payload", XSS_CORPUS)
def test_nothing_executable_survives(payload: str) -> None:
    # The detector does see the payload as dangerous before cleaning.
    assert _EXECUTABLE.search(html.unescape(payload).replace("\t", ""))
    out = sanitize_html(payload, BASE)
    assert not _EXECUTABLE.search(out), out
    # Parsed back, no element carries an event handler or a scripted URL.
    if out.strip():
        for el in lxml.html.fragment_fromstring(out, create_parent="div").iter():
            for name, value in el.attrib.items():
                assert not name.lower().startswith("on"), out
                assert not value.strip().lower().startswith(("javascript", "data")), out


def test_structure_and_structural_styles_are_kept() -> None:
    html = (
        '<h2>Head</h2><p style="text-align: center; color: red; background: #000;'
        ' font-weight: bold; line-height: 1.6">Body <b>bold</b> <em>em</em></p>'
        "<ul><li>one</li></ul><blockquote>q</blockquote>"
        '<table><tr><td colspan="2">cell</td></tr></table>'
    )
    out = sanitize_html(html)
    assert "<h2>Head</h2>" in out
    assert 'style="text-align: center; font-weight: bold; line-height: 1.6"' in out
    assert "color" not in out
    assert "background" not in out
    assert "<li>one</li>" in out
    assert 'colspan="2"' in out


def test_style_with_only_colour_is_removed_entirely() -> None:
    out = sanitize_html('<span style="color: #f00; background-color: white">x</span>')
    assert out == "<span>x</span>"


def test_relative_urls_become_absolute_and_links_get_rel() -> None:
    out = sanitize_html('<a href="../about">a</a><img src="img/p.jpg" alt="p">', BASE)
    assert 'href="https://news.example.com/about"' in out
    assert 'rel="noopener noreferrer"' in out
    assert 'src="https://news.example.com/2024/img/p.jpg"' in out
    assert 'alt="p"' in out


def test_without_base_relative_urls_pass_unchanged() -> None:
    out = sanitize_html('<img src="/media/ab/cd.jpg" data-original-src="https://x.example/a.jpg">')
    assert 'src="/media/ab/cd.jpg"' in out
    assert 'data-original-src="https://x.example/a.jpg"' in out


def test_invalid_base_is_ignored_not_fatal() -> None:
    assert 'href="/x"' in sanitize_html('<a href="/x">x</a>', "not a url")


def test_form_is_unwrapped_keeping_its_text() -> None:
    out = sanitize_html("<form><p>Article text</p><input name=q></form>")
    assert out == "<p>Article text</p>"


def test_cjk_text_is_untouched() -> None:
    html = "<p>中文标点：“引号”，句号。</p>"
    assert sanitize_html(html) == html


def test_empty_input() -> None:
    assert sanitize_html("") == ""


@pytest.mark.parametrize("markup", [
    '<a href="//cdn.example/x">protocol-relative</a>',
    '<a href="">empty</a>',
    '<a href="#note">fragment</a>',
    '<img src="?size=2">',
    '<a HREF = page.html>unquoted</a>',
    '<p>only absolute <a href="https://a.example/">a</a> <img src="http://b.example/i.png"></p>',
    '<a href="mailto:x@example.com">mail</a><a href="javascript:alert(1)">js</a>',
    '<img data-original-src="rel/a.jpg" src="https://c.example/a.jpg">',
    '<a href="HTTPS://CAPS.EXAMPLE/">caps</a><a href="rel">rel</a>',
    '<p> href="https://in.text/ but a <a href="rel">relative</a> link</p>',
])
def test_shared_cleaner_agrees_with_a_cleaner_built_for_the_base(markup: str) -> None:
    """The shared pass-through cleaner plus the relative-URL fallback gives exactly
    what a cleaner configured with the item's base would give."""
    expected = nh3.clean(markup, **sanitize._options(), url_relative=("rewrite_with_base", BASE))
    assert sanitize_html(markup, BASE) == expected
