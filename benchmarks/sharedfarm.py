"""The shared feed farm (``../shared/bench/feedfarm.py``) as a child of a benchmark."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

FARM = Path(__file__).resolve().parents[2] / "shared" / "bench" / "feedfarm.py"
#: building 1,000 feeds (~180 MB of XML) takes a while
START_SECONDS = 300.0


def start_farm(feeds: int, hosts: int, port_file: Path,
               latency: str = "fast") -> tuple[subprocess.Popen[bytes], str]:
    """Start the farm; returns it and its URL once it serves.

    The farm creates ``port_file`` before it writes the URL into it, so an empty
    file means "not yet". A farm that exits, or is not up within
    ``START_SECONDS``, ends the benchmark instead of leaving it waiting.
    """
    proc = subprocess.Popen(
        [sys.executable, str(FARM), "--feeds", str(feeds), "--hosts", str(hosts),
         "--latency", latency, "--port-file", str(port_file)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline and proc.poll() is None:
        url = port_file.read_text().strip() if port_file.exists() else ""
        if url:
            return proc, url
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise SystemExit(f"the feed farm did not start (exit status {proc.returncode})")
