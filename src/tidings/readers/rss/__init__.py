"""RSS 0.9x/1.0/2.0, RDF, Atom 0.3/1.0 and JSON Feed 1.0/1.1 (SPEC section 6, R-RSS)."""

from tidings.readers.rss.dates import parse_date
from tidings.readers.rss.parse import ParsedFeed, parse_feed
from tidings.readers.rss.reader import RssReader

__all__ = ["ParsedFeed", "RssReader", "parse_date", "parse_feed"]
