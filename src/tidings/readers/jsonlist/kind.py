"""The ``json_list`` kind: a JSON answer or a page's embedded data, read by paths.

Without an ``id`` path its entries have no GUIDs, so a new source starts keyed
by URL; with one it keeps GUIDs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tidings.model import IdentityMode, SourceKind
from tidings.readers.jsonlist.reader import JsonListReader
from tidings.readers.kind import Kind

JSON_LIST = SourceKind("json_list")


def identity(config: Mapping[str, Any]) -> IdentityMode:
    return IdentityMode.GUID if config.get("id") else IdentityMode.URL


KIND = Kind(name=JSON_LIST, reader=JsonListReader, summary="a JSON list or a page's data",
            identity=identity)
