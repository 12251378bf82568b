"""The SSRF campaign as a test (see attack_ssrf.py): 0 requests reach the forbidden host.

Where the machine allows it (``unshare -n`` and ``ip``: root on Linux), the
campaign runs in a network namespace of its own whose only interface is
loopback, so not even a bug in the guard and in the campaign's dial hook
together could send a packet off the machine; elsewhere it runs in this process,
behind the dial hook alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import attack_ssrf
from tidings.errors import BlockedAddressError
from tidings.net import Fetcher
from tidings.settings import load_settings

HERE = Path(__file__).resolve().parent


def _namespace_available() -> bool:
    if not shutil.which("unshare") or not shutil.which("ip"):
        return False
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    return probe.returncode == 0


def _in_namespace(data: Path) -> dict[str, Any]:
    script = f'ip link set lo up && exec "{sys.executable}" "{HERE / "attack_ssrf.py"}" "{data}"'
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    done = subprocess.run(["unshare", "-n", "sh", "-c", script], capture_output=True,
                          text=True, timeout=240, env=env, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    summary["namespace"] = True
    return summary


def test_no_entry_point_reaches_a_forbidden_host_in_any_spelling(tmp_path: Path) -> None:
    if _namespace_available():
        summary = _in_namespace(tmp_path / "data")
    else:
        summary = asyncio.run(attack_ssrf.campaign(tmp_path / "data"))
    assert summary["control_hits"] == 1, summary  # the counter counts
    assert summary["forbidden_hits"] == 0, summary
    assert summary["escapes"] == {}, summary
    assert summary["allowed_dials"] >= 1, summary  # the allowed host was reached
    attempts = summary["attempts"]
    assert set(attempts) >= {"discover", "add", "OPML import + collect", "extraction",
                             "image localization", "doctor", "webhooks", "web add page",
                             "collect: redirects 301/302/303/307/308", "preview",
                             "crawl seeds", "crawl blogroll links"}
    assert min(attempts.values()) >= len(attack_ssrf.FORMS)
    print(f"SSRF campaign: {summary['total']} attempts through {len(attempts)} entry points, "
          f"{summary['forms']} host forms, {summary['forbidden_hits']} escapes "
          f"(namespace: {summary.get('namespace', False)})")


async def test_a_refused_localhost_says_nothing_of_a_redirect(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "data", env={})
    async with Fetcher(settings, resolver=attack_ssrf.CampaignResolver()) as fetcher:
        for url in ("http://LOCALHOST/", "http://LocalHost.:8080/a", "http://[::1]/"):
            with pytest.raises(BlockedAddressError) as info:
                await fetcher.fetch(url)
            assert "redirect" not in str(info.value)
            assert str(info.value).startswith(f"{url}: refused: ")
