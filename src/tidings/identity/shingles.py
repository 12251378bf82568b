"""What two items of one story have in common: shingles of the title and the lead.

Story clustering (R-DEDUP-12) compares items by the *sets* of their shingles.
Latin-script text is cut into words; CJK text has no spaces, so it is cut into
overlapping character pairs (a Chinese word is mostly two characters, and a pair
that straddles two words still recurs in every copy of the same sentence).

What must never glue two stories together is removed before comparing
(docs/clustering.md, "Bad input"): titles that are only a site name ("Home",
"新闻"), stop words, sentences that every item of a site carries ("Subscribe to
our newsletter"), and items left with too little to compare, which then stand
alone. Templates particular to one source are removed later, by the index,
which sees the source's recent items.
"""

from __future__ import annotations

import html
import re
import unicodedata
import zlib
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

__all__ = ["LEAD_CHARS", "MIN_SHINGLES", "Shingles", "StoryText", "lead_text", "plain_text",
           "shingle_hash", "story_shingles", "story_text"]

#: characters of the lead (the summary, else the body's start) that are compared
LEAD_CHARS = 360
#: a copy identical in title and lead folds whatever its words, if the lead has this much
EXACT_MIN_LEAD = 80
#: fewer shingles than this, and an item is too short to be anybody's twin
MIN_SHINGLES = 4

_TAG = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]*>", re.IGNORECASE | re.DOTALL)
# a word of Latin script (with inner dots and dashes: "gpt-5", "node.js", "3.5"),
# or a run of CJK characters (kana, Han, hangul)
_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK_CLASS}]+|[^\W_](?:[\w.\-']*[^\W_])?")
_CJK = re.compile(f"[{_CJK_CLASS}]")
_CJK_RUN = re.compile(f"([{_CJK_CLASS}]+)")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*|\n+")

_STOP_TEXT = """
a about above after again against all also am an and any are as at be because been
before being below between both but by can could did do does doing down during each
few for from further had has have having he her here hers him his how i if in into
is it its itself just me more most my no nor not now of off on once only or other
our ours out over own same she should so some such than that the their theirs them
then there these they this those through to too under until up very was we were what
when where which while who whom why will with would you your yours says said say new
via s t re ve ll d according report reports reported today yesterday week year years
"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())
# CJK characters that glue words together rather than carry a story (separators)
_CJK_STOP = frozenset("的了是在和与及也都而就将对于把被这那个之其或等为以中上下")

#: whole titles that name a site or a section, never a story
_GENERIC_TITLES = frozenset({
    "", "home", "homepage", "index", "news", "latest", "latest news", "blog", "untitled",
    "no title", "welcome", "main page", "front page", "update", "updates", "breaking",
    "breaking news", "top stories", "article", "post", "首页", "主页", "新闻", "最新",
    "最新消息", "无标题", "博客", "快讯", "资讯", "ニュース", "ホーム",
})
#: sentences any site may end its items with; a sentence holding one is dropped
_BOILERPLATE = re.compile(
    r"subscribe|newsletter|sign up|sign-up|log in to|click here|read more|continue reading|"
    r"appeared first on|all rights reserved|cookie|follow us|share this|advertisement|"
    r"sponsored|this article was originally|originally published|"
    r"点击|关注|订阅|阅读原文|转载|版权|原标题|来源：|责任编辑|免责声明|扫码|广告",
    re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class StoryText:
    """The two texts an item is compared by: its normalized title and lead."""

    title: str
    lead: str


def plain_text(markup: str) -> str:
    """Text of an HTML fragment: tags (and scripts, styles) out, entities decoded."""
    return " ".join(html.unescape(_TAG.sub(" ", markup)).split())


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def lead_text(summary: str, body: str | None) -> str:
    """The body's start, else the summary, as plain text without boilerplate sentences
    (not normalized: a sentence encoder reads case). The body first: a feed's summary
    is often its own teaser, while every full copy of a story starts with the same
    paragraph."""
    text = plain_text(body[:4 * LEAD_CHARS] if body else "") or plain_text(summary)
    return " ".join(s for s in _SENTENCE.split(text) if s.strip() and not _BOILERPLATE.search(s))


def _lead(summary: str, body: str | None) -> str:
    """The lead as compared: normalized and cut to ``LEAD_CHARS``."""
    return _norm(lead_text(summary, body))[:LEAD_CHARS]


def story_text(title: str, summary: str, body: str | None) -> StoryText:
    """Normalized title (empty when it is only a site or section name) and lead."""
    norm = " ".join(_norm(plain_text(title)).split())
    bare = "".join(ch for ch in norm if unicodedata.category(ch)[0] in "LN" or ch == " ")
    if " ".join(bare.split()) in _GENERIC_TITLES:
        norm = ""
    return StoryText(norm, _lead(summary, body))


_STEMMER = snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """"cuts" and "cut", "released" and "releases" are one shingle (Snowball English;
    cached because news repeats its vocabulary)."""
    return str(_STEMMER.stemWord(word))


def _tokens(text: str) -> list[str]:
    """Words of Latin script (stop words out, stemmed) and CJK character pairs."""
    out: list[str] = []
    for token in _TOKEN.findall(_CJK_RUN.sub(r" \1 ", text)):
        if _CJK.match(token):
            out.extend(_cjk_pairs(token))
        elif len(token) > 1 and token not in _STOP_WORDS:
            out.append(_stem(token.removesuffix("'s")))
    return out


def _cjk_pairs(run: str) -> list[str]:
    pairs: list[str] = []
    for part in "".join(" " if ch in _CJK_STOP else ch for ch in run).split():
        if len(part) == 1:
            continue  # a lone character between stop characters says little
        pairs.extend(part[i:i + 2] for i in range(len(part) - 1))
    return pairs


@dataclass(frozen=True, slots=True)
class Shingles:
    """An item's shingles (title and lead as one set) and those of its title alone."""

    all: frozenset[str]
    title: frozenset[str]
    exact: int = 0  # CRC-32 of title + lead when both are there and the lead is long enough
    latin: frozenset[str] = frozenset()  # the Latin-script shingles, when CJK ones are there too


def story_shingles(text: StoryText) -> Shingles:
    """The shingles of title and lead, or none when there are fewer than
    ``MIN_SHINGLES`` (too short to tell one story from another).

    One set for both texts: the words of one copy's headline are often in another
    copy's lead. The title's own set is kept too, for copies that share only the
    headline (each site writing its own teaser).
    """
    title = frozenset(_tokens(text.title))
    shingles = title | frozenset(_tokens(text.lead))
    exact = shingle_hash(f"{text.title}\n{text.lead}") \
        if text.title and len(text.lead) >= EXACT_MIN_LEAD else 0
    if len(shingles) < MIN_SHINGLES:
        return Shingles(frozenset(), frozenset(), exact)
    latin = frozenset(s for s in shingles if not _CJK.match(s))
    return Shingles(shingles, title, exact, latin if latin != shingles else frozenset())


def shingle_hash(shingle: str) -> int:
    """A stable 32-bit hash (CRC-32): the same in every process and every release,
    because stored signatures are compared across restarts."""
    return zlib.crc32(shingle.encode("utf-8"))
