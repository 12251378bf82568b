"""tidings.extract: main-text extraction, sanitizing and image localization (R-EXTRACT)."""

from tidings.extract.article import Extraction, body_text, extract_article
from tidings.extract.images import ImageResult, localize_images
from tidings.extract.metadata import Metadata, extract_metadata
from tidings.extract.sanitize import sanitize_html

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
