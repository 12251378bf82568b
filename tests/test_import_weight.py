"""What importing tidings loads: story clustering's numpy, scipy and datasketch (~70 MiB
resident) only when a story index is made, so a crawl or a CLI command stays light."""

from __future__ import annotations

import subprocess
import sys

_HEAVY = ("numpy", "scipy", "datasketch")


def _loaded(code: str) -> list[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {_HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, timeout=120)
    return out.stdout.split()


def test_the_facade_and_the_crawler_load_no_clustering_libraries() -> None:
    assert _loaded("import tidings.app, tidings.cli, tidings.pipeline.crawl") == []


def test_a_story_index_loads_them_when_it_is_made() -> None:
    code = "from tidings.identity.storyindex import StoryIndex\nStoryIndex()"
    assert _loaded(code) == list(_HEAVY)
