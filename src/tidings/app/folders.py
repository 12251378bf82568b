"""``Tidings.folders``: the folders sources are filed under, with their counts.

Storage keeps folder names as typed: ``News`` and ``news`` are two folders (each
renamed, deleted and counted on its own), listed side by side.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from tidings.app.core import Core
from tidings.store.sources import SourceReads, SourceWrites


@dataclass(frozen=True, slots=True)
class Folder:
    name: str
    sources: int  # how many sources are filed under exactly this name


class Folders:
    """See the module docstring."""

    def __init__(self, core: Core) -> None:
        self._store: SourceReads = core.store
        self._writer = core.writer

    def names(self) -> list[str]:
        return self._store.list_folders()

    def counted(self) -> list[Folder]:
        """Every folder, in storage's order, with its number of sources."""
        counts = Counter(s.folder for s in self._store.list_sources() if s.folder)
        return [Folder(name, counts[name]) for name in self._store.list_folders()]

    async def rename(self, old: str, new: str) -> int:
        """Rename ``old`` (or merge it into ``new`` when that exists); sources moved."""
        moved: int = await self._writer(_rename, old, new)
        return moved

    async def delete(self, name: str) -> int:
        """Delete a folder; its sources stay, in no folder. Returns how many."""
        moved: int = await self._writer(_delete, name)
        return moved


def _rename(unit: SourceWrites, old: str, new: str) -> int:
    return unit.rename_folder(old, new)


def _delete(unit: SourceWrites, name: str) -> int:
    return unit.delete_folder(name)
