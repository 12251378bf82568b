"""The ``web_list`` reader: pages without feeds (SPEC section 6, R-WEB-1...5)."""

from tidings.readers.web.config import WebListConfig
from tidings.readers.web.html import ParsedList, parse_html_list
from tidings.readers.web.reader import WebListReader, parse_page

__all__ = ["ParsedList", "WebListConfig", "WebListReader", "parse_html_list", "parse_page"]
