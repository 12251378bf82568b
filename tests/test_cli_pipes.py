"""Output into a pipe whose reader is gone, and into a folder that is not there (issue 32).

``tidings export | head`` and ``stats | head`` said "internal error … please report
it" and exit 3: a closed pipe ends quietly with 141 (what a shell reports for a
tool SIGPIPE ended), a missing folder is one line naming it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_web_support import Spec, add_items, add_source, open_archive
from tidings.settings import Settings

ENV = {**os.environ, "TIDINGS_HOME": "", "TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1"}


@pytest.fixture
def archive(settings: Settings) -> Path:
    """An archive of two sources and 300 items (an export of about 100 KB)."""
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha")
    add_source(tid, "beta", "Beta")
    add_items(tid, [Spec(f"Story number {n}", source_id="alpha" if n % 2 else "beta",
                         body="<p>" + "words " * 50 + "</p>") for n in range(300)])
    tid.close()
    return settings.data_dir


def _into_closed_pipe(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run a command whose stdout is a pipe already closed at the reading end: every
    write fails as it does when ``head`` has read its lines and gone."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "tidings", "--data", str(data), *args],
                              stdout=write, stderr=subprocess.PIPE, text=True, env=ENV,
                              timeout=120, check=False)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [["export"], ["stats"], ["items"], ["sources"],
                                  ["sources", "--json"], ["search", "story"],
                                  ["export-opml"]])
def test_a_closed_pipe_ends_quietly_with_141(archive: Path, args: list[str]) -> None:
    done = _into_closed_pipe(archive, *args)
    assert done.returncode == 141, (args, done.returncode, done.stderr)
    assert done.stderr == "", (args, done.stderr)


def test_head_reads_its_lines_and_the_export_stops(archive: Path) -> None:
    """The shell pipeline itself: ``export | head -1`` prints one whole line, no error."""
    done = subprocess.run(
        f"{sys.executable} -m tidings --data {archive} export | head -1; "
        "echo \"status=${PIPESTATUS[0]}\" >&2", shell=True, executable="/bin/bash",
        capture_output=True, text=True, env=ENV, timeout=120, check=False)
    assert done.stdout.count("\n") == 1 and done.stdout.startswith('{"id": ')
    assert done.stderr.strip() in ("status=141", "status=0"), done.stderr


@pytest.mark.parametrize("args", [["export", "--out", "{d}/nodir/items.jsonl"],
                                  ["export-opml", "{d}/nodir/feeds.opml"]])
def test_output_into_a_missing_folder_is_one_line(archive: Path, args: list[str]) -> None:
    args = [a.format(d=archive.parent) for a in args]
    done = subprocess.run([sys.executable, "-m", "tidings", "--data", str(archive), *args],
                          capture_output=True, text=True, env=ENV, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert done.stderr == (f"tidings: {args[-1]}: the folder {archive.parent / 'nodir'} "
                           "does not exist (create it first)\n")
    assert not (archive.parent / "nodir").exists()
