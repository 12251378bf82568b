"""The one table of every listing: fitted to a terminal, plain lines into a pipe.

In a terminal the short columns keep their whole width, one free-text column
(a reason, a title, an abstract) takes the rest and wraps; when the rest is too
narrow to read (``canno / arste`` at 80 columns) that text goes on lines of its
own under its row instead. A URL column is folded onto further lines when the
table is too wide, never cut. Into a pipe or a file every row is one line of
tab-separated fields, whole and without a header, for ``cut``, ``awk`` and ``sort``.

rich measures and wraps the text (wide CJK characters count twice); the layout
is ours because rich's tables have no cell that spans a row, which the text
under its row needs.
"""

from __future__ import annotations

import io
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import click
from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.text import Text

#: the narrowest the free-text column is given beside the others; narrower, it goes
#: under its row
MIN_WIDE = 30
#: how far the text under a row is indented
UNDER_INDENT = 4
#: the narrowest a folded URL column becomes
MIN_FOLD = 20
GAP = "  "


@dataclass(frozen=True, slots=True)
class Column:
    """A column of a listing.

    ``wide``: the free-text column (at most one): it takes the width the others
    leave, and wraps; ``lines`` caps how many lines it shows in a terminal (an
    abstract is a glimpse, ``--json`` and the pipe have it whole). ``fold``: a
    URL, folded onto more lines rather than cut when the table is too wide.
    ``right``: numbers, aligned right.
    """

    name: str
    wide: bool = False
    fold: bool = False
    right: bool = False
    lines: int | None = None


def terminal_width() -> int | None:
    """The terminal's width when stdout is one; None for a pipe or a file."""
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


def print_table(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> None:
    """Print ``rows`` for where stdout goes (nothing at all for no rows)."""
    click.echo(render(columns, rows, terminal_width()), nl=False)


def render(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int | None) -> str:
    """The table as text: fitted to ``width`` columns, or tab-separated when None."""
    if not rows:
        return ""
    if width is None:
        return "".join("\t".join(_flat(cell) for cell in row) + "\n" for row in rows)
    return _Layout(columns, rows, max(width, MIN_FOLD + UNDER_INDENT)).text()


def _flat(cell: str) -> str:
    """One field of a tab-separated line: no tab or line break inside it."""
    return " ".join(cell.replace("\t", " ").splitlines())


class _Layout:
    """Column widths for one terminal width, and the lines of every row."""

    def __init__(self, columns: Sequence[Column], rows: Sequence[Sequence[str]],
                 width: int) -> None:
        self.columns = columns
        self.rows = [[_flat(c) for c in row] for row in rows]
        self.width = width
        self.console = Console(file=io.StringIO(), width=width, color_system=None)
        self.widths = [max(cell_len(c.name), *(cell_len(r[i]) for r in self.rows))
                       for i, c in enumerate(columns)]
        self.wide = next((i for i, c in enumerate(columns) if c.wide), None)
        self.under = False
        if self.wide is not None:
            rest = width - self._used(skip=self.wide)
            self.under = rest < MIN_WIDE and rest < self.widths[self.wide]
            if self.under:
                self.widths[self.wide] = width - UNDER_INDENT
        self._fold()
        if self.wide is not None and not self.under:
            rest = width - self._used(skip=self.wide)
            self.widths[self.wide] = max(1, min(rest, self.widths[self.wide]))

    def _used(self, skip: int | None = None) -> int:
        """The width of every column but ``skip``, with the gaps after them."""
        return sum(w + len(GAP) for i, w in enumerate(self.widths) if i != skip)

    def _fold(self) -> None:
        """Fold the widest URL columns until the row fits: the short columns, and the
        free-text column's least when it stays in the row."""
        beside = MIN_WIDE if self.wide is not None and not self.under else 0
        for i in sorted((i for i, c in enumerate(self.columns) if c.fold),
                        key=lambda i: -self.widths[i]):
            over = self._used(skip=self.wide) + beside - self.width
            if over <= 0:
                return
            self.widths[i] = max(MIN_FOLD, self.widths[i] - over)

    def text(self) -> str:
        lines = [self._line([c.name for c in self.columns])]
        if self.under and self.wide is not None:  # the header has the rows' shape
            lines.append(" " * UNDER_INDENT + self.columns[self.wide].name)
        for row in self.rows:
            lines.extend(self._row(row))
        return "".join(line.rstrip() + "\n" for line in lines)

    def _row(self, row: list[str]) -> list[str]:
        cells = [self._wrap(i, cell) for i, cell in enumerate(row)]
        under: list[str] = []
        if self.under and self.wide is not None:
            under = [" " * UNDER_INDENT + line for line in cells[self.wide]]
            cells[self.wide] = []
        height = max(1, *(len(c) for c in cells))
        return [self._line([c[n] if n < len(c) else "" for c in cells])
                for n in range(height)] + under

    def _wrap(self, index: int, cell: str) -> list[str]:
        column, width = self.columns[index], self.widths[index]
        if cell_len(cell) <= width:
            return [cell]
        if not (column.wide or column.fold):
            return [cell]  # a short column is as wide as its widest cell
        lines = [line.plain for line in Text(cell).wrap(
            self.console, width, overflow="fold")]
        if column.lines is not None and len(lines) > column.lines:
            lines = lines[:column.lines]
            lines[-1] = set_cell_size(lines[-1], width - 1).rstrip() + "…"
        return lines

    def _line(self, cells: list[str]) -> str:
        parts = []
        for i, cell in enumerate(cells):
            if self.under and i == self.wide:
                continue
            width = self.widths[i]
            pad = " " * max(0, width - cell_len(cell))
            parts.append(pad + cell if self.columns[i].right else cell + pad)
        return GAP.join(parts)
