"""Bad CLI input from the attack campaign (issue 16): one line and an exit code each."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from readonly import bound_by_permissions
from test_web_sessions import write_legacy
from tidings.app import hash_password
from tidings.app.legacy import IMPORTED_SUFFIX, LEGACY_FILE
from tidings.cli import cli
from tidings.cli.infiles import OPML_MAX_BYTES, read_regular_file
from tidings.errors import ConfigError

ENV = {"TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1"}


def _run(data: Path, *args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env=ENV, input=stdin)
    return result.exit_code, result.output


def _one_line_error(code: int, output: str, *needles: str) -> None:
    assert code == 1, output
    assert output.count("\n") == 1 and output.startswith("tidings: "), output
    assert "Traceback" not in output and "internal error" not in output
    for needle in needles:
        assert needle in output, output


def test_import_opml_refuses_devices_and_fifos_at_once(tmp_path: Path) -> None:
    assert _run(tmp_path, "init", "--empty")[0] == 0
    _one_line_error(*_run(tmp_path, "import-opml", "/dev/zero"), "not a regular file")
    fifo = tmp_path / "list.opml"
    os.mkfifo(fifo)
    # a real process: a FIFO without a writer would hang it, the timeout would say so
    done = subprocess.run([sys.executable, "-m", "tidings", "--data", str(tmp_path),
                           "import-opml", str(fifo)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, **ENV}, check=False)
    _one_line_error(done.returncode, done.stderr, "not a regular file")


def test_a_file_over_the_size_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.opml"
    big.write_bytes(b"<opml><body>" + b" " * 4096 + b"</body></opml>")
    with pytest.raises(ConfigError, match="4,122 bytes is more than the 1,024 allowed"):
        read_regular_file(big, 1024)
    assert read_regular_file(big, 8192).startswith(b"<opml>")
    assert OPML_MAX_BYTES >= 10 * 1024 * 1024  # 10,000 feeds is about 2 MB


def test_backup_where_it_cannot_write_is_one_line(tmp_path: Path) -> None:
    assert _run(tmp_path, "init", "--empty")[0] == 0
    (tmp_path / "backups").write_text("a file where the backup folder should be")
    _one_line_error(*_run(tmp_path, "backup"), "cannot write the backup in")


def test_set_password_where_the_old_file_cannot_be_renamed_is_one_line(tmp_path: Path) -> None:
    assert _run(tmp_path, "init", "--empty")[0] == 0
    write_legacy(tmp_path, hash_password("old password 1"), "tdg_" + "k" * 40)
    blocker = tmp_path / (LEGACY_FILE + IMPORTED_SUFFIX)
    (blocker / "inside").mkdir(parents=True)  # a non-empty folder: the rename fails
    _one_line_error(*_run(tmp_path, "set-password", "--stdin", stdin="new password 1\n"),
                    "cannot be renamed", "writable")
    shutil.rmtree(blocker)
    assert _run(tmp_path, "set-password", "--stdin", stdin="new password 1\n")[0] == 0


def test_backup_and_set_password_in_a_read_only_data_directory(tmp_path: Path) -> None:
    """As the campaign ran them: a data directory its user may not write."""
    prefix = bound_by_permissions()
    if prefix is None:
        pytest.skip("needs setpriv to run a command as root bound by permissions")
    data = Path(tempfile.mkdtemp(prefix="tidings-ro-", dir="/tmp"))
    try:
        assert _run(data, "init", "--empty")[0] == 0
        for path in (data, *data.iterdir()):
            path.chmod(0o555 if path.is_dir() else 0o444)
        for args, stdin in ((["backup"], None), (["set-password", "--stdin"], "pass word 1\n")):
            done = subprocess.run([*prefix, sys.executable, "-m", "tidings", "--data", str(data),
                                   *args], input=stdin, capture_output=True, text=True,
                                  timeout=60, env={**os.environ, **ENV}, check=False)
            _one_line_error(done.returncode, done.stdout + done.stderr, str(data))
    finally:
        shutil.rmtree(data, ignore_errors=True)
