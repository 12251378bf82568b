"""docs/settings.md's ready TOML for the paid APIs (issue 32) is what the code reads:
it loads as settings, its providers pass the checks, and its table names are the ones
the X and WeChat readers use by default."""

from __future__ import annotations

import re
from pathlib import Path

from tidings.pipeline.spend import parse_providers
from tidings.readers.wechat.reader import PROVIDER as WECHAT_PROVIDER
from tidings.readers.x.reader import PROVIDER as X_PROVIDER
from tidings.settings import load_settings

DOC = Path(__file__).resolve().parent.parent / "docs" / "settings.md"


def test_the_paid_api_example_is_read_as_written(tmp_path: Path) -> None:
    blocks = re.findall(r"```toml\n(.*?)```", DOC.read_text("utf-8"), re.DOTALL)
    example = next(b for b in blocks if "[providers." in b)
    (tmp_path / "tidings.toml").write_text(example)
    settings = load_settings(tmp_path, env={})
    providers = parse_providers(settings.providers)
    assert set(providers) == {X_PROVIDER, WECHAT_PROVIDER}
    social = providers[X_PROVIDER]
    assert social.base_url == "https://api.socialdata.tools"  # docs.socialdata.tools
    assert social.daily_calls == 500 and social.daily_cost == 0.10
    assert providers[WECHAT_PROVIDER].daily_cost == 20.0
    assert "YOUR_SOCIALDATA_KEY" not in repr(social), "a key is never shown whole"
