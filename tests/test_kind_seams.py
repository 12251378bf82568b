"""The seams of issue 28: a source kind is known only to its own module under readers/.

Outside ``tidings/readers`` no module names a kind (a string equal to a kind's
name) or reads a key of a source's cursor (the reader's own, docs/readers.md);
they ask the kind's record through ``tidings.readers`` (or ``tidings.app.kinds``
above the readers). The few places that use a kind's name for something else
are listed below with the reason.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from pathlib import Path

from tidings.readers import all_kinds, pushed_kind
from tidings.store.base import PUSHED_KIND

SRC = Path(__file__).resolve().parent.parent / "src" / "tidings"

#: (module, name) pairs that are not kinds though they read like one
NOT_KINDS = {
    # a feed's format as autodiscovery reports it (FeedCandidate.type: rss, atom, json)
    **{(str(p.relative_to(SRC)), "rss"): "feed format" for p in (SRC / "discovery").glob("*.py")},
    ("opml.py", "rss"): "OPML's outline type attribute",
    ("app/naming.py", "rss"): "a word of feed addresses (a source's slug skips it)",
    ("store/base.py", "external"): "PUSHED_KIND, checked against the readers below",
}


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "readers" not in p.relative_to(SRC).parts)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants (prose may name a kind)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def kind_names_used(tree: ast.AST, names: set[str]) -> list[tuple[int, str]]:
    docs = _docstrings(tree)
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in names
            and id(n) not in docs]


def _is_cursor(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "cursor") or (
        isinstance(node, ast.Name) and node.id == "cursor")


def pipeline_keys() -> set[str]:
    """The names of the cursor keys the pipeline keeps for itself (module constants named
    ``*_KEY`` in pipeline/: its listing memory, the detail pages it carries over); the
    rest of a cursor is the reader's."""
    return {t.id for p in (SRC / "pipeline").glob("*.py")
            for n in ast.parse(p.read_text("utf-8")).body if isinstance(n, ast.Assign)
            for t in n.targets if isinstance(t, ast.Name) and t.id.endswith("_KEY")}


def _own(key: ast.expr | None, own: Collection[str]) -> bool:
    return isinstance(key, ast.Name) and key.id in own


def cursor_reads(tree: ast.AST, own: Collection[str] = ()) -> list[int]:
    """Lines that use a key of a cursor (``x.cursor[k]``, ``x.cursor.get(k)``...) other
    than one of the pipeline's own keys ``own`` (named by their constants)."""
    methods = ("get", "pop", "setdefault", "keys", "items")
    subscripts = [n.lineno for n in ast.walk(tree)
                  if isinstance(n, ast.Subscript) and _is_cursor(n.value)
                  and not _own(n.slice, own)]
    calls = [n.lineno for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in methods and _is_cursor(n.func.value)
             and not _own(n.args[0] if n.args else None, own)]
    return sorted(subscripts + calls)


def test_no_module_outside_the_readers_names_a_kind() -> None:
    names = {k.name for k in all_kinds()}
    found = []
    for path in _modules():
        rel = str(path.relative_to(SRC))
        for line, name in kind_names_used(ast.parse(path.read_text("utf-8")), names):
            if (rel, name) not in NOT_KINDS:
                found.append(f"{rel}:{line}: {name!r}")
    assert not found, "kinds named outside readers/ (ask tidings.readers):\n" + "\n".join(found)


def test_no_template_names_a_kind() -> None:
    names = {k.name for k in all_kinds()}
    quoted = re.compile(r"""['"]([a-z_]+)['"]""")
    found = [f"{p.name}: {m.group(1)!r}" for p in (SRC / "web" / "templates").glob("*.html")
             for m in quoted.finditer(p.read_text("utf-8")) if m.group(1) in names]
    assert not found, found
    reads = [p.name for p in (SRC / "web" / "templates").glob("*.html")
             if re.search(r"\.cursor\b(?!s)", p.read_text("utf-8"))]
    assert not reads, f"templates reading a cursor (show Kind.facts): {reads}"


def test_no_module_outside_the_readers_opens_a_cursor() -> None:
    own = pipeline_keys()
    assert "LISTING_KEY" in own, "the listing memory's key is found"
    found = [f"{p.relative_to(SRC)}:{line}" for p in _modules()
             for line in cursor_reads(ast.parse(p.read_text("utf-8")), own)]
    assert not found, "cursor keys read outside readers/:\n" + "\n".join(found)


def test_the_checks_find_what_they_look_for() -> None:
    """The two checks on code that breaks the rule (the old leaks of pipeline and app)."""
    old = ast.parse('NO_FETCH = {"x", "wechat"}\n'
                    'def f(source):\n    """Names "x" in prose."""\n'
                    '    return source.cursor.get("since_id") or cursor["websub_hub"]\n'
                    'def g(source):\n    return source.cursor.get(LISTING_KEY), '
                    'source.cursor.get(CURSOR_KEY)\n')
    assert [n for _, n in kind_names_used(old, {"x", "wechat"})] == ["x", "wechat"]
    assert cursor_reads(old, {"LISTING_KEY"}) == [4, 4, 6], "a reader's key, by name too"


def test_storage_skips_the_kind_the_readers_declare_pushed() -> None:
    assert pushed_kind() == PUSHED_KIND
