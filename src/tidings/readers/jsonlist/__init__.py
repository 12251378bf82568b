"""The ``json_list`` reader: JSON endpoints and JSON embedded in pages (R-JSON-1...3)."""

from tidings.readers.jsonlist.config import JsonListConfig
from tidings.readers.jsonlist.parse import ParsedJson, parse_json_list
from tidings.readers.jsonlist.reader import JsonListReader

__all__ = ["JsonListConfig", "JsonListReader", "ParsedJson", "parse_json_list"]
