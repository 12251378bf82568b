"""Moving an archive whole (issue 32): export-opml wrote 29 of 36 sources without a
word and import-items then refused the other sources' items. export-sources + export
read into import-sources + import-items bring every source and item back, secrets
excepted and named; export-opml says what OPML cannot carry."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from test_web_support import Spec, add_items, open_archive, run
from tidings.cli import cli
from tidings.model import SourceKind
from tidings.settings import Settings

WEB_LIST = {"item": "a[class*='PostCard_post-card']", "title": "h3",
            "date": "div[class*='post-date']", "cookie": "sid=secret-cookie",
            "headers": {"Authorization": "Bearer secret-token", "Accept-Language": "en"}}
JSON_LIST = {"url": "html_url", "title": "name", "date": "published_at", "id": "id"}


def invoke(data: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--data", str(data), *args], env={"TIDINGS_HOME": None})


def _first_archive(settings: Settings) -> list[str]:
    """Six sources of every kind that OPML cannot all carry, two items each."""
    tid = open_archive(settings)

    async def sources() -> list[str]:
        made = [
            await tid.sources.create("https://feed.example/rss.xml", title="Feed",
                                    folder="News"),
            await tid.sources.create("https://www.anthropic.com/news", kind=SourceKind("web_list"),
                                    title="Anthropic news", config=WEB_LIST, folder="AI"),
            await tid.sources.create("https://api.github.com/repos/astral-sh/uv/releases",
                                    kind=SourceKind("json_list"), title="uv", config=JSON_LIST),
            await tid.sources.create("pushed", kind=SourceKind("external"), title="Pushed"),
            await tid.sources.add("x:@sama"),
            await tid.sources.add("wechat:QbitAI", folder="CN"),
        ]
        return [s.id for s in made]

    ids = run(sources)
    add_items(tid, [Spec(f"{sid} item {n}", source_id=sid) for sid in ids for n in (1, 2)])
    tid.close()
    return ids


def test_sources_and_items_move_whole_and_secrets_stay_behind(
    settings: Settings, tmp_path: Path,
) -> None:
    old, new = settings.data_dir, tmp_path / "new"
    ids = _first_archive(settings)
    opml = invoke(old, "export-opml")
    assert opml.exit_code == 0 and opml.stdout.startswith("<?xml")
    assert opml.stderr.startswith("tidings: 3 sources not in the OPML, which carries feeds "
                                  "and accounts only: ")
    for sid in ids[1:4]:
        assert sid in opml.stderr
    assert "export-sources" in opml.stderr

    moved = invoke(old, "export-sources", str(tmp_path / "sources.json"))
    assert moved.exit_code == 0, moved.output
    assert f"{ids[1]}: cookie, headers.Authorization left out (a secret)" in moved.stderr
    text = (tmp_path / "sources.json").read_text()
    assert "secret" not in text and "Accept-Language" in text
    assert invoke(old, "export", "--out", str(tmp_path / "items.jsonl")).exit_code == 0

    assert invoke(new, "init", "--empty").exit_code == 0
    added = invoke(new, "import-sources", str(tmp_path / "sources.json"))
    assert (added.exit_code, added.stdout) == (0, "6 sources added, 0 already present\n")
    items = invoke(new, "import-items", str(tmp_path / "items.jsonl"))
    assert items.exit_code == 0, items.output
    assert items.stdout == "12 items imported, 0 already present\n"

    def every_source(data: Path) -> list[dict[str, object]]:
        return json.loads(invoke(data, "export-sources").stdout)["sources"]
    assert every_source(new) == every_source(old), "kind, id, folder, config: all of it"
    assert {s["kind"] for s in every_source(new)} == {
        "rss", "web_list", "json_list", "external", "x", "wechat"}
    config = json.loads(invoke(new, "config", ids[1], "--json").stdout)
    assert config == {k: v for k, v in WEB_LIST.items() if k != "cookie"} | {
        "headers": {"Accept-Language": "en"}}
    again = invoke(new, "import-sources", str(tmp_path / "sources.json"))
    assert again.stdout == "0 sources added, 6 already present\n"


def test_a_bad_sources_file_is_one_line_and_a_bad_entry_is_named(tmp_path: Path) -> None:
    invoke(tmp_path, "init", "--empty")
    bad = tmp_path / "items.jsonl"
    bad.write_text('{"id": 1}\n')
    refused = invoke(tmp_path, "import-sources", str(bad))
    assert refused.exit_code == 1 and refused.stderr.startswith("tidings: not a sources file")
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps({"format": "tidings-sources", "version": 1, "sources": [
        {"id": "good", "kind": "external", "url": "external:good"},
        {"id": "bad", "kind": "web_list", "url": "https://a.example/", "config": {"itme": 1}},
        {"id": "odd", "kind": "gopher", "url": "gopher://x"}]}))
    result = invoke(tmp_path, "import-sources", str(mixed))
    assert result.exit_code == 1 and result.stdout == "1 source added, 0 already present\n"
    assert "source 2 (bad): unknown config key 'itme'" in result.stderr
    assert "source 3 (odd):" in result.stderr and "2 sources refused" in result.stderr


def test_opml_import_gives_no_guard_warning_for_accounts(tmp_path: Path) -> None:
    (tmp_path / "a.opml").write_text(
        '<?xml version="1.0"?><opml version="2.0"><body>'
        '<outline type="rss" text="Sam" xmlUrl="x:@sama"/>'
        '<outline type="rss" text="Qbit" xmlUrl="wechat:QbitAI"/>'
        '<outline type="rss" text="Router" xmlUrl="http://192.168.1.1/feed"/></body></opml>')
    invoke(tmp_path, "init", "--empty")
    result = invoke(tmp_path, "import-opml", str(tmp_path / "a.opml"))
    assert result.exit_code == 0 and result.stdout.startswith("3 sources added")
    assert "guard will refuse" in result.stderr and "192.168.1.1" in result.stderr
    assert "x:@sama" not in result.stderr and "wechat:" not in result.stderr
    assert "local host name" not in result.stderr
