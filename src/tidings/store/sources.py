"""What storage keeps of sources and their folders: looking them up and editing them.

Part of the :class:`tidings.store.base.Storage` protocol, in its own module as
``ops`` is, so that a layer that only reads or edits sources asks for these
and nothing else (docs/architecture.md, "Narrow protocols").
"""

from __future__ import annotations

from typing import Protocol

from tidings.model import Source
from tidings.store.writemodels import SourceUpdate


class SourceReads(Protocol):
    def get_source(self, source_id: str) -> Source: ...
    def find_source_by_url(self, url: str) -> Source | None: ...
    def list_sources(self) -> list[Source]: ...
    def list_folders(self) -> list[str]:
        """Every folder, by name (case-insensitive)."""
        ...


class SourceWrites(Protocol):
    def add_source(self, source: Source) -> Source:
        """Insert a source (its ``created_at`` set); ConfigError if the id or URL is taken."""
        ...

    def update_source(self, source_id: str, update: SourceUpdate) -> Source:
        """Set the fields ``update`` names; returns the source as stored after it."""
        ...

    def change_source(self, source_id: str, update: SourceUpdate) -> None:
        """:meth:`update_source` without reading the source back (the end of every run)."""
        ...

    def delete_source(self, source_id: str) -> None:
        """Delete a source and its runs; items it owns stay (with their source id)."""
        ...

    def add_folder(self, name: str) -> None:
        """Create a folder (nothing happens if it exists). A source's ``folder`` set by
        add_source or update_source creates its folder too."""
        ...

    def rename_folder(self, old: str, new: str) -> int:
        """Rename a folder, or merge it into ``new`` if that exists; returns how many
        sources it holds now. NotFoundError if ``old`` does not exist."""
        ...

    def delete_folder(self, name: str) -> int:
        """Delete a folder; its sources are left in no folder. Returns how many."""
        ...
