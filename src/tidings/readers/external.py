"""The ``external`` kind: items pushed in by the ingest API, never fetched (R-INGEST).

It has no reader: nothing is collected, its address is the name it was pushed
under and never changes.
"""

from __future__ import annotations

from tidings.model import SourceKind
from tidings.readers.kind import Kind

EXTERNAL = SourceKind("external")

KIND = Kind(name=EXTERNAL, reader=None, summary="items pushed in, never fetched",
            fixed_url="an external source keeps its name (nothing is fetched)")
