"""tidings: a self-hosted content aggregator and reading archive."""

from tidings.settings import VERSION

__version__ = VERSION
__all__ = ["__version__"]
