"""Layer rules import-linter cannot express: stdlib network modules only in tidings.net."""

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
    together they were a third of every command's start-up."""
    code = ("import sys, tidings.cli, tidings.web.server; "
            "print(sorted(m for m in ('trafilatura', 'feedparser', 'tidings.extract.article') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
