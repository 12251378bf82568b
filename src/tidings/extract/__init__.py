"""tidings.extract: main-text extraction, sanitizing and image localization (R-EXTRACT)."""

from tidings.extract.sanitize import sanitize_html

__all__ = ["sanitize_html"]
