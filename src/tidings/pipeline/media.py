"""Where extraction keeps an article's images (R-EXTRACT-4): on disk, or in the archive.

An embedded archive (SQLite) keeps them as files in ``DATA_DIR/media``: one
process extracts and serves them. A PostgreSQL archive is a cluster's: a worker
extracts, and any web node - each with a data directory of its own, on its own
machine - serves ``/media``, so the images go into the database every node
reaches (table ``media``, one row per content address, written through the
process's writer like everything else). Why not a shared folder: it would be a
network file system to run on every host and to keep in step with the database
on every crash, as with the raw archive (docs/scale.md).
"""

from __future__ import annotations

from datetime import datetime

from tidings.extract.images import Keep, media_name, on_disk
from tidings.pipeline.env import PipelineEnv
from tidings.store.archive import MediaWrites


def _put(unit: MediaWrites, name: str, body: bytes, at: datetime) -> None:
    unit.put_media(name, body, at)


def image_keeper(env: PipelineEnv) -> Keep:
    """How this process keeps the images it localizes."""
    if not env.settings.database_url.strip():
        return on_disk(env.settings.data_dir / "media")

    async def keep(content: bytes, ext: str) -> str:
        name = media_name(content, ext)
        await env.writer(_put, name, content, env.clock())
        return name

    return keep
