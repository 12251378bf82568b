"""What a headless server needs from the command line (issue 32): API tokens made,
listed and revoked without the settings page, several sources removed at once, the
demo in a folder of one's choosing."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

from test_web_support import open_archive, serve_web
from tidings.cli import cli
from tidings.settings import Settings


def invoke(data: Path, *args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--data", str(data), *args], input=stdin,
                              env={"TIDINGS_HOME": None})


def test_a_token_made_on_the_command_line_opens_the_api_until_revoked(
    settings: Settings,
) -> None:
    data = settings.data_dir
    assert invoke(data, "init", "--empty").exit_code == 0
    assert invoke(data, "set-password", "--stdin", stdin="a long enough password\n"
                  ).exit_code == 0
    made = invoke(data, "tokens", "add", "phone")
    assert made.exit_code == 0, made.output
    value = made.stdout.strip()
    assert made.stdout == value + "\n" and value.startswith("tdg_"), "the value alone"
    (listed,) = json.loads(invoke(data, "tokens", "list", "--json").stdout)
    assert listed["name"] == "phone" and listed["last_used_at"] is None
    assert listed["id"] in made.stderr and "not shown again" in made.stderr
    table = invoke(data, "tokens", "list")
    assert value not in table.output, "a listing never shows a value"
    assert table.stdout.split("\t")[0] == listed["id"] and "\tnever\tphone\n" in table.stdout
    tid = open_archive(settings)
    server = serve_web(tid, settings)
    try:
        with httpx.Client(base_url=server.url) as http:
            bearer = {"Authorization": f"Bearer {value}"}
            assert http.get("/api/v1/items").status_code == 401
            assert http.get("/api/v1/items", headers=bearer).status_code == 200
            gone = invoke(data, "tokens", "revoke", listed["id"])
            assert gone.exit_code == 0 and f"revoked token {listed['id']}" in gone.stdout
            assert http.get("/api/v1/items", headers=bearer).status_code == 401
    finally:
        server.stop()
        tid.close()
    again = invoke(data, "tokens", "revoke", listed["id"])
    assert again.exit_code == 1 and again.stderr == (
        f"tidings: no API token {listed['id']!r} (see `tidings tokens list`)\n")
    assert json.loads(invoke(data, "tokens", "list", "--json").stdout) == []
    empty = invoke(data, "tokens", "list")
    assert empty.stdout == "" and "tidings tokens add NAME" in empty.stderr


def test_remove_takes_several_sources_and_an_unknown_one_removes_none(tmp_path: Path) -> None:
    invoke(tmp_path, "init", "--empty")
    for name in ("one", "two", "three"):
        assert invoke(tmp_path, "add", "--kind", "external", name).exit_code == 0
    refused = invoke(tmp_path, "remove", "one", "nope", "two")
    assert refused.exit_code == 1 and "nope" in refused.stderr
    ids = [s["id"] for s in json.loads(invoke(tmp_path, "sources", "--json").stdout)]
    assert sorted(ids) == ["one", "three", "two"], "nothing removed"
    done = invoke(tmp_path, "remove", "one", "two", "one")
    assert done.exit_code == 0 and done.stdout == "removed one, two\n"
    assert [s["id"] for s in json.loads(invoke(tmp_path, "sources", "--json").stdout)] == \
        ["three"]
    assert invoke(tmp_path, "remove").exit_code == 2


def test_demo_takes_its_own_data_option(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/cli.md: `tidings demo --data DIR` (the group's --data says the same)."""
    monkeypatch.chdir(tmp_path)
    chosen = tmp_path / "my-demo"
    result = CliRunner().invoke(cli, ["demo", "--data", str(chosen), "--site-port", "0",
                                      "--no-serve"], env={"TIDINGS_HOME": None})
    assert result.exit_code == 0, result.output
    assert f"archive in {chosen} (3 sources added" in result.stdout
    assert (chosen / "tidings.sqlite3").is_file()
    assert not (tmp_path / "tidings-demo").exists()
    listed = invoke(chosen, "sources", "--json")
    assert len(json.loads(listed.stdout)) == 3
