"""tidings.extract: main-text extraction, sanitizing and image localization (R-EXTRACT).

Article extraction (trafilatura) and image localization load on first use: they
were a third of every CLI command's start-up, and most commands (and collection
rounds run with ``--no-extract``) never need them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tidings.extract.metadata import Metadata, extract_metadata
from tidings.extract.sanitize import sanitize_html

if TYPE_CHECKING:
    from tidings.extract.article import Extraction, body_text, extract_article
    from tidings.extract.images import ImageResult, localize_images

__all__ = [
    "Extraction",
    "ImageResult",
    "Metadata",
    "body_text",
    "extract_article",
    "extract_metadata",
    "localize_images",
    "sanitize_html",
]

_LAZY = {"Extraction": "article", "body_text": "article", "extract_article": "article",
         "ImageResult": "images", "localize_images": "images"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
