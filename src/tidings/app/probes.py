"""``Tidings.probes``: what collecting a source would do, with nothing stored.

``doctor`` walks every stage of one stored source (R-OPS-5); ``preview`` does
the same for a source not added yet (the add page); ``propose_web_list`` finds
the list on a page without a feed and proposes its selectors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tidings.app.core import Core
from tidings.model import SourceKind
from tidings.pipeline.doctor import DoctorReport, doctor


class Probes:
    """See the module docstring."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def doctor(self, source_id: str, *, conditional: bool = False) -> DoctorReport:
        """Every stage of collecting one source, without storing."""
        return await doctor(self._core.env(), self._core.store.get_source(source_id),
                            conditional=conditional)

    async def preview(self, kind: SourceKind, url: str,
                      config: Mapping[str, Any]) -> DoctorReport:
        """What a source not stored yet would store, nothing written (issue 17)."""
        from tidings.pipeline.preview import preview

        return await preview(self._core.env(), kind, url, config)

    async def propose_web_list(self, url: str) -> tuple[dict[str, Any], DoctorReport] | None:
        """Selectors for the list on a page without a feed, with their preview; None
        when the page has no repeated block of entry links."""
        from tidings.pipeline.preview import propose

        return await propose(self._core.env(), url)
