"""Load on a reader served by a child process: a free port, the wait for it, and wrk."""

from __future__ import annotations

import re
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import NamedTuple

_UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


class Load(NamedTuple):
    """What wrk measured: requests per second, and the median and 99th percentile in ms."""

    rate: float
    p50: float
    p99: float


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(proc: subprocess.Popen[bytes], url: str, timeout: float = 60.0) -> None:
    """Return once ``url``/healthz answers 200; a server that exits or never answers is
    killed and ends the benchmark (opening the archive may take a while: migrations)."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise SystemExit(f"the server at {url} did not start (exit status {proc.returncode})")


def rotation(paths: list[str], folder: Path) -> Path:
    """A wrk script that asks for ``paths`` in turn (one request each, round and round)."""
    script = folder / "paths.lua"
    quoted = ",".join('"' + p.replace('"', "") + '"' for p in paths)
    script.write_text("local paths = {" + quoted + "}\nlocal i = 0\n"
                      "request = function()\n  i = i % #paths + 1\n"
                      "  return wrk.format(nil, paths[i])\nend\n")
    return script


def wrk(url: str, seconds: int, *, connections: int = 32, threads: int = 1,
        cookie: str | None = None, script: Path | None = None) -> Load:
    """Load ``url`` for ``seconds``; any answer but a 2xx ends the benchmark (an error
    page is fast, and its figures would look good)."""
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency"]
    if cookie is not None:
        cmd += ["-H", f"Cookie: {cookie}"]
    if script is not None:
        cmd += ["-s", str(script)]
    out = subprocess.run([*cmd, url], capture_output=True, text=True, check=True).stdout
    if "Non-2xx" in out:
        raise SystemExit(f"errors while loading {url}:\n{out}")
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    assert rate, out
    return Load(float(rate.group(1)), _ms(out, "50%"), _ms(out, "99%"))


def _ms(out: str, label: str) -> float:
    match = re.search(rf"^\s+{label}\s+([\d.]+)(us|ms|s|m)\s*$", out, re.MULTILINE)
    assert match, out
    return float(match.group(1)) * _UNIT_MS[match.group(2)]
