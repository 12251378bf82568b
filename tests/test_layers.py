"""Layer rules import-linter cannot express: stdlib network modules only in tidings.net, SQL
only in store, a light CLI start, and Tidings a lifecycle object over use-case modules."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "tidings"
NETWORK = {"urllib.request", "http.client", "socket", "ssl", "ftplib", "smtplib"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_only_net_imports_stdlib_network_modules() -> None:
    offenders = {}
    for path in SRC.rglob("*.py"):
        if path.is_relative_to(SRC / "net"):
            continue
        bad = imported_modules(path) & NETWORK
        if bad:
            offenders[str(path.relative_to(SRC))] = sorted(bad)
    assert offenders == {}


def test_sql_stays_in_store() -> None:
    offenders = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                 if not p.is_relative_to(SRC / "store")
                 and imported_modules(p) & {"sqlite3", "psycopg"}]
    assert offenders == []


def test_the_cli_starts_without_the_heavy_optional_parts() -> None:
    """Article extraction (trafilatura) and the feedparser fallback load on first use:
    together they were a third of every command's start-up. Cluster mode's job queue
    (procrastinate, psycopg) loads with the cluster commands: a fifth more."""
    heavy = ("trafilatura", "feedparser", "tidings.extract.article", "procrastinate",
             "psycopg")
    code = ("import sys, tidings.cli, tidings.web.server; "
            f"print(sorted(m for m in {heavy!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


LIFECYCLE = {"open", "close", "aclose", "settings", "clock", "fetcher", "use_fetcher",
             "pipeline_env", "write", "restart"}


def test_tidings_is_a_lifecycle_object_and_each_use_case_a_module(tmp_path: Path) -> None:
    """``Tidings`` opens and closes the archive; what a person does with it is a use case,
    one module of ``tidings.app`` each, reached as an attribute (the facade had grown to
    62 methods in one 642-line module before)."""
    from tidings.app import Tidings
    from tidings.settings import load_settings

    members = {name for name in vars(Tidings) if not name.startswith("_")}
    assert members <= LIFECYCLE, f"not lifecycle: {sorted(members - LIFECYCLE)}"
    tidings = Tidings.open(load_settings(tmp_path, env={}), create=True)
    try:
        use_cases = {name: type(value).__module__ for name, value in vars(tidings).items()
                     if not name.startswith("_")}
    finally:
        tidings.close()
    assert len(use_cases) >= 15, sorted(use_cases)
    homes = sorted(use_cases.values())
    assert all(h.startswith("tidings.app.") and h != "tidings.app.facade" for h in homes)
    assert len(set(homes)) == len(homes), "two use cases share a module"
