"""Moving an archive's sources whole: ``export-sources`` / ``import-sources``, and
what an OPML export leaves out.

OPML carries feeds (and our X and WeChat accounts, whose URLs come back as
accounts); a ``web_list`` or ``json_list`` source's rules and a pushed source have
no place in it, and ``export-opml`` dropped them without a word (issue 32). The
native format keeps every source with its kind, id, folder and config, so that
``export-sources`` + ``export`` read into ``import-sources`` + ``import-items``
brings every item back under its own source. Secrets are left out and named: a
cookie or an authorization header does not travel in a file people mail around.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tidings.app.kinds import opml_kinds
from tidings.app.sources import Sources
from tidings.errors import ConfigError, TidingsError
from tidings.model import Source, SourceKind, Visibility
from tidings.store.base import SourceUpdate

#: the ``format`` field of a sources file; ``version`` grows when its shape changes
FORMAT = "tidings-sources"
VERSION = 1
#: config keys that hold a secret, and header names that do
SECRET_KEYS = frozenset({"cookie"})
SECRET_HEADER = re.compile(r"auth|cookie|token|secret|key|session|password", re.IGNORECASE)


@dataclass(slots=True)
class SourcesImport:
    """What ``import-sources`` did: the sources added, how many were there already,
    and one line per entry refused (the file's others are all added)."""

    added: list[Source] = field(default_factory=list)
    present: int = 0
    refused: list[str] = field(default_factory=list)


def opml_left_out(sources: Sequence[Source]) -> list[Source]:
    """The sources an OPML export cannot carry (web_list, json_list, pushed)."""
    kept = opml_kinds()
    return [s for s in sources if s.kind not in kept]


def without_secrets(config: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``config`` with its secrets taken out, and the names of what was taken."""
    clean = {k: v for k, v in config.items() if k not in SECRET_KEYS}
    dropped = sorted(k for k in config if k in SECRET_KEYS)
    headers = config.get("headers")
    if isinstance(headers, Mapping):
        kept = {h: v for h, v in headers.items() if not SECRET_HEADER.search(str(h))}
        dropped += [f"headers.{h}" for h in sorted(headers) if h not in kept]
        if kept:
            clean["headers"] = kept
        else:
            clean.pop("headers", None)
    return clean, dropped


def export_sources(sources: Sequence[Source], now: datetime) -> tuple[str, list[str]]:
    """The sources as a JSON document, and one note per source whose secrets were
    left out (so the person knows what to set again after the import)."""
    entries, notes = [], []
    for s in sources:
        config, dropped = without_secrets(s.config)
        if dropped:
            notes.append(f"{s.id}: {', '.join(dropped)} left out (a secret); set it again "
                         f"after the import with `tidings config {s.id} --set …`")
        entries.append({
            "id": s.id, "kind": s.kind, "url": s.url, "title": s.title,
            "site_url": s.site_url, "folder": s.folder, "config": config,
            "visibility": s.visibility.value, "priority": s.priority,
            "muted_reason": s.muted_reason})
    document = {"format": FORMAT, "version": VERSION, "exported_at": now.isoformat(),
                "sources": entries}
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n", notes


def read_sources_file(data: bytes) -> list[Mapping[str, Any]]:
    """The entries of a sources file; ConfigError when it is not one."""
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"not a sources file: not JSON ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ConfigError(f"not a sources file: no \"format\": \"{FORMAT}\" "
                            "(write one with `tidings export-sources`)")
    if document.get("version") != VERSION:
        raise ConfigError(f"sources file version {document.get('version')!r}: this "
                            f"tidings reads version {VERSION}")
    entries = document.get("sources")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ConfigError("not a sources file: \"sources\" is not a list of objects")
    return entries


async def import_sources(sources: Sources, entries: Sequence[Mapping[str, Any]]
                         ) -> SourcesImport:
    """Add every source of ``entries`` under its own id; one already there (by URL)
    is counted, an entry that cannot be added is refused with its reason."""
    report = SourcesImport()
    urls = {s.url for s in sources.all()}
    for n, entry in enumerate(entries, 1):
        where = f"source {n} ({entry.get('id') or entry.get('url') or '?'})"
        try:
            kind = SourceKind(str(entry.get("kind")))
            url = _text(entry, "url")
            if url in urls:
                report.present += 1
                continue
            report.added.append(await _add(sources, kind, url, entry))
            urls.add(report.added[-1].url)
        except ValueError as exc:
            report.refused.append(f"{where}: {exc}")
        except TidingsError as exc:
            report.refused.append(f"{where}: {exc}")
    return report


async def _add(sources: Sources, kind: SourceKind, url: str, entry: Mapping[str, Any]
               ) -> Source:
    config = entry.get("config") or {}
    if not isinstance(config, dict):
        raise ValueError("config is not an object")
    priority = entry.get("priority") or 0
    if not isinstance(priority, int):
        raise ValueError("priority is not a number")
    source = await sources.create(
        url, kind=kind, title=_text(entry, "title", ""), source_id=_text(entry, "id"),
        config=config, site_url=_text(entry, "site_url", "") or None,
        folder=_text(entry, "folder", "") or None, priority=priority)
    visibility = Visibility(str(entry.get("visibility") or Visibility.EDITORIAL.value))
    muted = entry.get("muted_reason")
    if visibility is not source.visibility or muted:
        source = await sources.update(source.id, SourceUpdate(
            visibility=visibility, muted_reason=str(muted) if muted else None))
    return source


def _text(entry: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = entry.get(key, default)
    if value is None and default is not None:
        return default
    if not isinstance(value, str):
        raise ValueError(f"{key} is missing or not text")
    return value
