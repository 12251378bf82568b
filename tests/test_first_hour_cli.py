"""What a new user trips over on the command line (issue 15): one-line errors, one
exit-code rule, a busy port, searches with nothing in them, ``init`` twice."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from farm import Farm, running_farm
from readonly import bound_by_permissions
from test_web_support import Spec, add_items, add_source, open_archive, serve_web, write
from tidings.cli import cli
from tidings.settings import Settings

ENV = {"TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1", "TIDINGS_PER_HOST_DELAY": "0"}
OPML = ('<?xml version="1.0"?><opml version="2.0"><body>'
        '<outline type="rss" text="A" xmlUrl="http://127.0.0.1:9/a.xml"/>'
        '<outline type="rss" text="B" xmlUrl="http://127.0.0.1:9/b.xml"/></body></opml>')


def invoke(data: Path, *args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env=ENV, input=stdin)
    return result.exit_code, result.output


def one_line(output: str) -> str:
    assert output.count("\n") == 1 and output.startswith("tidings: "), output
    assert "Traceback" not in output and "internal error" not in output, output
    return output


def test_serve_on_a_busy_port_is_one_line_and_starts_no_round(tmp_path: Path) -> None:
    (tmp_path / "f.opml").write_text(OPML)
    assert invoke(tmp_path, "init", "--empty")[0] == 0
    assert invoke(tmp_path, "import-opml", str(tmp_path / "f.opml"))[0] == 0
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "tidings", "--data", str(tmp_path), "serve",
             "--port", str(port)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1, done.stderr
    line = one_line(done.stderr)
    assert f"port {port} is in use" in line and f"--port {port + 1}" in line
    with sqlite3.connect(tmp_path / "tidings.sqlite3") as db:
        assert db.execute("select count(*) from fetch_runs").fetchone()[0] == 0


@pytest.mark.parametrize(("args", "code", "says"), [
    (["items", "--since", "9999999999d"], 2, "--since"),
    (["items", "--limit", "-1"], 2, "--limit"),
    (["import-opml", "missing.opml"], 2, "does not exist"),
    (["set-password"], 1, "--stdin"),
    (["--config", "missing.toml", "items"], 2, "no such settings file"),
    (["no-such-command"], 2, "No such command"),
    (["collect"], 2, "--once"),
    (["search", "🙂"], 2, "nothing to search for"),
])
def test_bad_arguments_are_one_line_with_the_documented_code(
    tmp_path: Path, args: list[str], code: int, says: str,
) -> None:
    assert invoke(tmp_path, "init", "--empty")[0] == 0
    got, out = invoke(tmp_path, *args, stdin="")
    assert got == code, out
    assert says in one_line(out)


@pytest.mark.parametrize("query", ["🙂", "*", "%", "()", "'", "", "  ", '""'])
def test_a_search_with_nothing_searchable_finds_nothing_and_says_so(
    tmp_path: Path, query: str,
) -> None:
    invoke(tmp_path, "init", "--empty")
    code, out = invoke(tmp_path, "search", query)
    assert code == 2 and "nothing to search for in" in one_line(out)


def test_a_leading_minus_word_is_a_search_term_not_an_option(tmp_path: Path) -> None:
    invoke(tmp_path, "init", "--empty")
    code, out = invoke(tmp_path, "search", "-word", "--json")
    assert code == 0, out
    assert json.loads(out) == []
    code, out = invoke(tmp_path, "search", "--rankd", "word")
    assert code == 2 and "No such option: --rankd" in one_line(out)


def test_nothing_searchable_in_the_api_and_the_web_page(settings: Settings) -> None:
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha")
    add_items(tid, [Spec("Story one"), Spec("Story two")])
    server = serve_web(tid, settings)
    try:
        with httpx.Client(base_url=server.url) as http:
            for q in ["🙂", "*", "()", " "]:
                api = http.get("/api/v1/search", params={"q": q})
                assert api.status_code == 400, (q, api.text)
                assert "nothing to search for" in api.json()["detail"]
                page = http.get("/search", params={"q": q + " x" if q == " " else q})
                if q != " ":
                    assert page.status_code == 400 and "nothing to search for" in page.text
                    assert "Story one" not in page.text
            assert http.get("/api/v1/search", params={"q": "Story"}).json()["hits"]
    finally:
        server.stop()
        tid.close()


def test_init_on_an_existing_archive_changes_nothing(tmp_path: Path) -> None:
    assert invoke(tmp_path, "init", "--empty")[0] == 0
    code, out = invoke(tmp_path, "init")
    assert code == 0 and "nothing changed" in out and "--defaults" in out
    assert json.loads(invoke(tmp_path, "sources", "--json")[1]) == []
    code, out = invoke(tmp_path, "init", "--defaults")
    assert code == 0 and "18 sources added" in out
    assert len(json.loads(invoke(tmp_path, "sources", "--json")[1])) == 18
    assert invoke(tmp_path, "stats")[1].startswith("sources: 18 new\n")
    assert invoke(tmp_path, "init", "--empty", "--defaults")[0] == 2


def test_collect_exits_1_when_any_source_failed(tmp_path: Path) -> None:
    """docs/cli.md: 0 all done, 1 something failed; the same for --all and named sources."""
    with running_farm(Farm(feeds=10)) as farm:
        (tmp_path / "f.opml").write_bytes(farm.opml())
        invoke(tmp_path, "init", "--empty")
        invoke(tmp_path, "import-opml", str(tmp_path / "f.opml"))
        code, out = invoke(tmp_path, "collect", "--all", "--json", "--no-extract")
        assert code == 1 and json.loads(out)["failed"] == 1  # feed 7 answers 404
        rows = {r["url"].rsplit("/", 1)[-1]: r["id"]
                for r in json.loads(invoke(tmp_path, "sources", "--json")[1])}
        assert invoke(tmp_path, "collect", rows["7.xml"], "--no-extract")[0] == 1
        healthy = rows["1.xml"]
        assert invoke(tmp_path, "collect", healthy, "--no-extract")[0] == 0


def test_ids_of_non_latin_titles_come_from_host_and_path(tmp_path: Path) -> None:
    (tmp_path / "cn.opml").write_text(
        '<?xml version="1.0"?><opml version="2.0"><body>'
        '<outline type="rss" text="少数派" xmlUrl="https://sspai.com/feed"/>'
        '<outline type="rss" text="数据库周刊" xmlUrl="https://db.example.cn/weekly/atom.xml"/>'
        '<outline type="rss" text="数据库" xmlUrl="https://db.example.cn/daily/rss.xml"/>'
        '<outline type="rss" text="Café Olé" xmlUrl="https://cafe.example/feed"/>'
        "</body></opml>")
    invoke(tmp_path, "init", "--empty")
    assert invoke(tmp_path, "import-opml", str(tmp_path / "cn.opml"))[0] == 0
    ids = {r["url"]: r["id"] for r in json.loads(invoke(tmp_path, "sources", "--json")[1])}
    assert ids == {"https://sspai.com/feed": "sspai-com",
                   "https://db.example.cn/weekly/atom.xml": "db-example-cn-weekly",
                   "https://db.example.cn/daily/rss.xml": "db-example-cn-daily",
                   "https://cafe.example/feed": "cafe-ole"}


@pytest.mark.parametrize("bad", ["a b", "a/b", "..", "a..b", "-x", "x" * 65, "ü"])
def test_a_chosen_id_is_checked(tmp_path: Path, bad: str) -> None:
    invoke(tmp_path, "init", "--empty")
    code, out = invoke(tmp_path, "add", "--kind", "external", "pushed", "--id", bad)
    assert code == 2 and "source id" in one_line(out)
    assert invoke(tmp_path, "add", "--kind", "external", "pushed", "--id", "my.feed_2")[0] == 0


def test_sources_show_the_reason_first_the_url_once_and_never_cut(tmp_path: Path) -> None:
    with running_farm(Farm(feeds=8)) as farm:
        (tmp_path / "f.opml").write_bytes(farm.opml())
        invoke(tmp_path, "init", "--empty")
        invoke(tmp_path, "import-opml", str(tmp_path / "f.opml"))
        code, before = invoke(tmp_path, "sources")
        assert code == 0 and before.count("never collected yet") == 8
        assert " ok " not in before, "a source never fetched is new, not ok"
        invoke(tmp_path, "collect", "--all", "--no-extract")
        code, table = invoke(tmp_path, "sources")
        ids = {r["url"].rsplit("/", 1)[-1]: r["id"]
               for r in json.loads(invoke(tmp_path, "sources", "--json")[1])}
    healthy = next(line.split() for line in table.splitlines()
                   if line.split()[:1] == [ids["1.xml"]])
    assert healthy[1] == "ok" and float(healthy[6]) > 0, "its first items count per day"
    failing = f"{farm.base}/feeds/7.xml"
    flat = "".join(table.split())
    assert "HTTP404NotFound(failed)" in flat, table
    assert failing not in flat, "the URL is not repeated in the reason"
    assert "never collected" not in table


def test_counts_have_proper_plurals(tmp_path: Path) -> None:
    (tmp_path / "one.opml").write_text(OPML.replace(
        '<outline type="rss" text="B" xmlUrl="http://127.0.0.1:9/b.xml"/>', ""))
    invoke(tmp_path, "init", "--empty")
    code, out = invoke(tmp_path, "import-opml", str(tmp_path / "one.opml"))
    assert code == 0 and out.startswith("1 source added"), out


def test_the_status_bar_counts_the_round_and_says_when_in_words(settings: Settings) -> None:
    """A stopped process's abandoned runs are not part of the last round (issue 15
    saw "3/21 ok" for a round of three); times read "3 minutes ago", never "now ago"."""
    from datetime import UTC, datetime, timedelta

    from tidings.model import RunCounts, RunOutcome
    from tidings.store.base import Unit

    tid = open_archive(settings)
    for sid in ("a", "b", "c", "d", "e"):
        add_source(tid, sid, sid.upper())
    now = datetime.now(UTC)

    def runs(unit: Unit) -> None:
        for sid in ("d", "e"):  # a serve that stopped at once: abandoned, no round
            run_id = unit.start_run(sid, now - timedelta(minutes=6))
            unit.finish_run(run_id, now - timedelta(minutes=6),
                            RunCounts(RunOutcome.ABANDONED))
        for sid in ("a", "b", "c"):
            run_id = unit.start_run(sid, now - timedelta(minutes=3))
            unit.finish_run(run_id, now - timedelta(minutes=3),
                            RunCounts(RunOutcome.OK, created=1))

    write(tid, runs)
    server = serve_web(tid, settings)
    try:
        page = httpx.get(server.url + "/").text
    finally:
        server.stop()
        tid.close()
    status = " ".join(page.split('class="status"')[1].split("</p>")[0].split())
    assert "3 of 3 sources ok" in status, status
    assert "3 new items" in status and "3 minutes ago" in status, status
    assert " ago ago" not in page and "now ago" not in page


def test_two_backups_a_day_are_both_kept_and_restore_checks_first(tmp_path: Path) -> None:
    (tmp_path / "f.opml").write_text(OPML)
    invoke(tmp_path, "init", "--empty")
    invoke(tmp_path, "import-opml", str(tmp_path / "f.opml"))
    assert invoke(tmp_path, "backup")[0] == 0
    assert invoke(tmp_path, "backup")[0] == 0
    backups = sorted((tmp_path / "backups").glob("tidings-*.sqlite3"))
    assert len(backups) == 2, "a second backup on the same day keeps the first"
    invoke(tmp_path, "remove", json.loads(invoke(tmp_path, "sources", "--json")[1])[0]["id"])
    assert len(json.loads(invoke(tmp_path, "sources", "--json")[1])) == 1
    # a broken file is refused before anything changes
    broken = tmp_path / "broken.sqlite3"
    broken.write_bytes(backups[0].read_bytes()[:4096])
    code, out = invoke(tmp_path, "restore", str(broken))
    assert code == 1 and str(broken) in one_line(out)
    assert len(json.loads(invoke(tmp_path, "sources", "--json")[1])) == 1
    code, out = invoke(tmp_path, "restore", "--check", str(backups[-1]))
    assert code == 0 and "a whole archive of 0 items" in out
    code, out = invoke(tmp_path, "restore", str(backups[-1]))
    assert code == 0 and "previous archive is kept" in out, out
    assert len(json.loads(invoke(tmp_path, "sources", "--json")[1])) == 2
    kept = list(tmp_path.glob("tidings.sqlite3.before-restore-*"))
    assert len(kept) == 1
    with sqlite3.connect(kept[0]) as db:
        assert db.execute("select count(*) from sources").fetchone()[0] == 1


def test_rotation_keeps_every_backup_of_the_kept_days(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from tidings.store.backup import rotate_backups

    names = ["tidings-2026-11-30.sqlite3", "tidings-2026-11-30-230000.sqlite3",
             "tidings-2026-12-01-080000.sqlite3", "tidings-2026-12-01-170000.sqlite3",
             "tidings-2026-12-01-170000-2.sqlite3"]
    for name in names:
        (tmp_path / name).write_bytes(b"")
    gone = rotate_backups(tmp_path, datetime(2026, 12, 1, 18, tzinfo=UTC), suffix=".sqlite3",
                          keep_daily=1, keep_monthly=2)
    # the day kept keeps all three; November keeps its newest only
    assert sorted(p.name for p in gone) == ["tidings-2026-11-30.sqlite3"]


def test_opml_import_reports_skipped_outlines_and_guarded_addresses(tmp_path: Path) -> None:
    (tmp_path / "mixed.opml").write_text(
        '<?xml version="1.0"?><opml version="2.0"><body>'
        '<outline text="Folder"><outline type="rss" text="Good" xmlUrl="https://good.example/feed"/>'
        "</outline>"
        '<outline type="rss" text="Again" xmlUrl="https://good.example/feed"/>'
        '<outline type="rss" text="Gopher" xmlUrl="gopher://old.example/feed"/>'
        '<outline type="rss" text="Bare"/>'
        '<outline type="rss" text="Router" xmlUrl="http://192.168.1.1/feed"/>'
        '<outline type="rss" text="Mine" xmlUrl="http://127.0.0.1:9/feed"/>'
        '<outline type="rss" text="Printer" xmlUrl="http://printer.local/feed"/>'
        "</body></opml>")
    invoke(tmp_path, "init", "--empty")
    result = CliRunner().invoke(
        cli, ["--data", str(tmp_path), "import-opml", str(tmp_path / "mixed.opml")],
        env={"TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1"})
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("4 sources added, 0 already present; 5 notes above")
    notes = result.stderr
    assert "'Again': https://good.example/feed is listed twice" in notes
    assert ("'Gopher': gopher://old.example/feed is neither an http(s) URL nor an account "
            "(x:@handle, wechat:<account id>)") in notes
    assert "'Bare': no xmlUrl" in notes
    assert "http://192.168.1.1/feed: added, but the guard will refuse it " \
           "(192.168.1.1 is a private address)" in notes
    assert "printer.local is a local host name" in notes
    assert "127.0.0.1" not in notes, "allowed by the settings: no warning"
    assert "'Folder'" not in notes, "a folder with feeds is not skipped"


def test_a_deleted_item_does_not_come_back_from_its_feed(tmp_path: Path) -> None:
    with running_farm(Farm(feeds=2)) as farm:
        (tmp_path / "f.opml").write_bytes(farm.opml())
        invoke(tmp_path, "init", "--empty")
        invoke(tmp_path, "import-opml", str(tmp_path / "f.opml"))
        invoke(tmp_path, "collect", "--all", "--no-extract")
        before = json.loads(invoke(tmp_path, "items", "--json", "--limit", "500")[1])
        victim = before[0]
        code, out = invoke(tmp_path, "delete", str(victim["id"]))
        assert code == 0 and out.startswith(f"deleted {victim['id']}: ")
        code, out = invoke(tmp_path, "delete", str(victim["id"]))
        assert code == 1 and "not found" in one_line(out)
        assert invoke(tmp_path, "delete", "zero")[0] == 2
        new = farm.tick(every=1)  # every feed publishes: the whole feed is parsed again
        code, out = invoke(tmp_path, "collect", "--all", "--no-extract", "--json")
        assert code == 0 and json.loads(out)["created"] == len(new), out
        after = json.loads(invoke(tmp_path, "items", "--json", "--limit", "500")[1])
    assert len(after) == len(before) - 1 + len(new)
    assert victim["key"] not in {i["key"] for i in after}, "the tombstone holds"


def test_delete_in_the_api_and_on_the_article_page(settings: Settings) -> None:
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha")
    ids = add_items(tid, [Spec("Keep me"), Spec("Delete me by API"), Spec("Delete me by page")])
    server = serve_web(tid, settings)
    try:
        with httpx.Client(base_url=server.url) as http:
            article = http.get(f"/item/{ids[2]}").text
            token = article.split('<meta name="csrf" content="')[1].split('"', 1)[0]
            gone = http.delete(f"/api/v1/items/{ids[1]}", headers={"x-csrf-token": token})
            assert gone.status_code == 204, gone.text
            assert http.delete(f"/api/v1/items/{ids[1]}",
                               headers={"x-csrf-token": token}).status_code == 404
            page = http.post(f"/item/{ids[2]}/delete", data={"csrf": token, "next": "/all"})
            assert page.status_code == 303 and page.headers["location"] == "/all"
            listing = http.get("/all").text
    finally:
        server.stop()
    keys = [i.key for i in tid.items.query()]
    tid.close()
    assert len(keys) == 1 and "Keep me" in listing and "Delete me" not in listing


def test_imported_history_is_a_baseline_not_a_revision(tmp_path: Path) -> None:
    """R-DEDUP-5: items exported from one archive and imported into another are history;
    the first collection of the same feeds there records their hashes, revises nothing."""
    first, second = tmp_path / "first", tmp_path / "second"
    with running_farm(Farm(feeds=4)) as farm:
        (tmp_path / "f.opml").write_bytes(farm.opml())
        for data in (first, second):
            invoke(data, "init", "--empty")
            invoke(data, "import-opml", str(tmp_path / "f.opml"))
        invoke(first, "collect", "--all", "--no-extract")
        exported = tmp_path / "items.jsonl"
        assert invoke(first, "export", "--out", str(exported))[0] == 0
        total = len(exported.read_text().splitlines())
        with exported.open("a") as extra:
            extra.write("not json\n")
            extra.write(json.dumps({"source": "nobody", "url": "https://x.example/1"}) + "\n")
        code, out = invoke(second, "import-items", str(exported))
        assert code == 1, out
        assert f"{total} items imported, 0 already present" in out
        assert f"line {total + 1}: not JSON" in out and "no source 'nobody'" in out
        assert "2 lines refused" in out
        with sqlite3.connect(second / "tidings.sqlite3") as db:
            assert db.execute("select count(*) from items where backfill = 1 and "
                              "content_hash is null").fetchone()[0] == total
        code, out = invoke(second, "collect", "--all", "--no-extract", "--json")
        summary = json.loads(out)
    assert code == 0 and summary["created"] == 0 and summary["revised"] == 0, summary
    with sqlite3.connect(second / "tidings.sqlite3") as db:
        assert db.execute("select count(*) from items where content_hash is null"
                          ).fetchone()[0] == 0, "the collection recorded every baseline"
    assert f"\n0 items imported, {total} already present\n" in invoke(
        second, "import-items", str(exported))[1]


@pytest.fixture
def read_only_archive() -> Iterator[tuple[Path, list[str]]]:
    """An archive whose directory and file this test's commands may not write (a chmod;
    as root the commands run without the capabilities that override it: readonly.py).
    Yields the data directory and the command prefix."""
    base = Path(tempfile.mkdtemp(prefix="tidings-ro-", dir="/tmp"))
    data = base / "data"
    try:
        invoke(data, "init", "--empty")
        (base / "f.opml").write_text(OPML)
        invoke(data, "import-opml", str(base / "f.opml"))
        bound = bound_by_permissions()
        if bound is None:
            pytest.skip("needs setpriv to run a command as root bound by permissions")
        prefix = [*bound, sys.executable, "-m", "tidings", "--data", str(data)]
        for path in data.iterdir():
            path.chmod(0o444)
        (data / "tidings.sqlite3").chmod(0o444)
        data.chmod(0o555)
        yield data, prefix
    finally:
        data.chmod(0o755)
        shutil.rmtree(base)


def test_a_read_only_data_directory_reads_and_refuses_writes_in_one_line(
    read_only_archive: tuple[Path, list[str]],
) -> None:
    data, prefix = read_only_archive
    env = {**os.environ, "TIDINGS_HOME": ""}
    there = sorted(p.name for p in data.iterdir())  # the archive and its lock file
    for args in (["sources", "--json"], ["items"], ["stats"], ["export"], ["search", "x"]):
        done = subprocess.run([*prefix, *args], capture_output=True, text=True, env=env,
                              check=False, timeout=60)
        assert done.returncode in (0, 1), (args, done.stderr)
        assert "read-only" not in done.stderr and "Traceback" not in done.stderr, args
    listed = subprocess.run([*prefix, "sources", "--json"], capture_output=True, text=True,
                            env=env, check=True, timeout=60)
    assert len(json.loads(listed.stdout)) == 2
    for args in (["add", "--kind", "external", "pushed"], ["remove", "a"],
                 ["collect", "--all"], ["config", "a", "--set", "proxy=true"]):
        done = subprocess.run([*prefix, *args], capture_output=True, text=True, env=env,
                              check=False, timeout=60)
        assert done.returncode == 1, (args, done.stderr)
        assert f"the data directory {data} is read-only" in one_line(done.stderr)
    assert sorted(p.name for p in data.iterdir()) == there, "nothing written"


def test_a_bare_tidings_shows_its_help() -> None:
    result = CliRunner().invoke(cli, [], prog_name="tidings")
    assert result.exit_code == 0 and result.output.startswith("Usage: tidings")
    assert "tidings: Usage" not in result.output


def test_doctor_of_an_account_without_its_paid_api_fails_with_1(tmp_path: Path) -> None:
    """docs/cli.md: a source that cannot be read is 1, for doctor as for collect."""
    invoke(tmp_path, "init", "--empty")
    assert invoke(tmp_path, "add", "x:@someone")[0] == 0
    code, out = invoke(tmp_path, "doctor", "x-someone")
    assert code == 1, out
    assert "FAILED" in out and "[providers.socialdata]" in out, "the fix is named"
    # no request to x.com is shown, for none is sent: the paid API is asked
    assert "GET https://x.com" not in out
    assert "paid API socialdata: no call sent" in out and "valid (1 key)" in out, out
    (tmp_path / "tidings.toml").write_text(
        '[providers.socialdata]\nbase_url = "https://api.socialdata.example"\n'
        'api_key = "sk-test-1234"\ndaily_calls = 10\n')
    code, out = invoke(tmp_path, "doctor", "x-someone")
    assert code == 1 and "doctor sends no call to the paid API 'socialdata'" in out, out
    assert "`tidings collect x-someone` reads the source" in out


def test_words_a_new_user_reads(tmp_path: Path) -> None:
    """Issue 32: plurals from the one helper, "no matches" alone, "no item N", nothing
    imported said as such, the handle rule for a bad handle."""
    invoke(tmp_path, "init", "--empty")
    (tmp_path / "one.txt").write_text("x:@solo\n")
    assert invoke(tmp_path, "import-accounts", str(tmp_path / "one.txt"))[1] == \
        "1 account added, 0 already present\n"
    invoke(tmp_path, "config", "x-solo", "--folder", "People")
    assert "(1 source)" in invoke(tmp_path, "folders", "rename", "People", "Folks")[1]
    result = CliRunner().invoke(cli, ["--data", str(tmp_path), "search", "xyzzy"], env=ENV)
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "no matches\n")
    code, out = invoke(tmp_path, "cluster", "explain", "99999")
    assert code == 1 and one_line(out) == "tidings: no item 99999\n"
    code, out = invoke(tmp_path, "add", "x:@bad!")
    assert code == 2 and "1 to 15 letters, digits or _" in one_line(out)
    assert "http" not in out
    (tmp_path / "bad.jsonl").write_text("not json\n")
    code, out = invoke(tmp_path, "import-items", str(tmp_path / "bad.jsonl"))
    assert code == 1 and "items imported" not in out and "the rest is stored" not in out
    assert out.endswith("tidings: nothing imported: the 1 line refused (listed above)\n")
    (tmp_path / "empty.jsonl").write_text("")
    code, out = invoke(tmp_path, "import-items", str(tmp_path / "empty.jsonl"))
    assert (code, out) == (0, "nothing imported: the file has no items\n")
