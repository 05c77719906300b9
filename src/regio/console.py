"""Rich consoles and width-fitting tables for the command line.

When stdout is not a terminal (a pipe, a file, CI logs) rich falls back to 80 columns and folds
tables mid-word; regio's tables need about 110. :func:`stdout_console` gives them that width
off a terminal unless ``$COLUMNS`` asks for another, and the terminal's own width on one.

:func:`fit_tables` lays rows out in as many tables as the width needs, so a narrow console
(80 columns) never cuts a digit or a name: numbers keep their full width, long names wrap at
their ``-`` / ``_`` / ``:`` / ``.`` separators, free text wraps at spaces, and when the columns
still do not fit they are split over several tables that each repeat the first (key) column.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from typing import Literal

import attrs
from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = [
    "PIPE_WIDTH",
    "TableColumn",
    "compact_number",
    "fit_tables",
    "stderr_console",
    "stdout_console",
    "wrap_name",
]

#: Columns used when stdout is not a terminal and ``$COLUMNS`` is not set.
PIPE_WIDTH = 120
#: Narrowest the key column of a table is wrapped to (characters).
KEY_MIN_WIDTH = 12


def _env_columns() -> int | None:
    value = os.environ.get("COLUMNS", "")
    return int(value) if value.isdigit() and int(value) > 0 else None


def stdout_console(*, highlight: bool = True) -> Console:
    """A console on stdout: ``$COLUMNS`` when set, else the terminal's width, or
    :data:`PIPE_WIDTH` columns off a terminal. ``highlight``: rich's number and string
    highlighting."""
    columns = _env_columns()
    if columns is None and not sys.stdout.isatty():
        columns = PIPE_WIDTH
    return Console(width=columns, highlight=highlight)


def stderr_console() -> Console:
    """A console on stderr, for error messages: soft-wrapped (the terminal folds a long
    line; no newline is put inside a path or a name, so a copied path still opens)."""
    return Console(stderr=True, soft_wrap=True)


def compact_number(n: float) -> str:
    """``n`` in at most 6 characters: ``999``, ``1.0k``, ``43.2k``, ``2.3M``, ``1.1G`` (one
    decimal, rounded; negative numbers keep their sign)."""
    sign, value = ("-", -n) if n < 0 else ("", n)
    if value < 1000:
        return f"{sign}{value:.0f}" if float(value).is_integer() else f"{sign}{value:.1f}"
    for unit, scale in (("k", 1e3), ("M", 1e6), ("G", 1e9)):
        if round(value / scale, 1) < 1000:
            return f"{sign}{value / scale:.1f}{unit}"
    return f"{sign}{value / 1e12:.1f}T"


_SEPARATORS = re.compile(r"(?<=[-_:./ ])")


def wrap_name(name: str, width: int) -> list[str]:
    """``name`` cut into lines of at most ``width`` characters, after a ``-``, ``_``, ``:``,
    ``.`` or ``/`` where it has one (a piece longer than ``width`` is folded). The lines joined
    give ``name`` back."""
    width = max(1, width)
    lines: list[str] = []
    line = ""
    for piece in _SEPARATORS.split(name):
        while len(piece) > width:
            if line:
                lines.append(line)
                line = ""
            lines.append(piece[:width])
            piece = piece[width:]
        if len(line) + len(piece) > width:
            lines.append(line)
            line = piece
        else:
            line += piece
    if line or not lines:
        lines.append(line)
    return lines


@attrs.frozen
class TableColumn:
    """A column of :func:`fit_tables`: ``header``, ``justify`` (``left`` | ``right``) and
    ``wrap`` (free text that may wrap at spaces; otherwise the cells keep their width)."""

    header: str
    justify: Literal["left", "right"] = "left"
    wrap: bool = False


def _plain(cell: str) -> str:
    return Text.from_markup(cell).plain


def _natural(header: str, cells: Sequence[str]) -> int:
    return max([len(header), *(max(map(len, _plain(c).split("\n"))) for c in cells)])


def _least(column: TableColumn, cells: Sequence[str]) -> int:
    if not column.wrap:
        return _natural(column.header, cells)
    words = [w for c in cells for w in _plain(c).split()]
    return max([len(column.header), *map(len, words)])


def _span(widths: Sequence[int]) -> int:
    """Cells of a boxed table whose columns are ``widths`` wide (padding 1 each side)."""
    return sum(widths) + 3 * len(widths) + 1


def _chunks(key: int, least: Sequence[int], width: int) -> list[list[int]]:
    """Indexes of the non-key columns (1..), greedily grouped so each group plus the key
    column fits ``width``."""
    groups: list[list[int]] = [[]]
    for i in range(1, len(least)):
        if groups[-1] and _span([key, *(least[j] for j in groups[-1]), least[i]]) > width:
            groups.append([])
        groups[-1].append(i)
    return groups


def _key_width(
    natural: int, floor: int, least: Sequence[int], width: int
) -> tuple[int, list[list[int]]]:
    """The key column's width and the column groups: tables that fit ``width`` first, then
    the fewest tables, and among those the widest key (names wrapped as little as possible)."""

    def rank(key: int, groups: list[list[int]]) -> tuple[bool, int]:
        over = any(_span([key, *(least[j] for j in g)]) > width for g in groups)
        return over, len(groups)

    best = natural, _chunks(natural, least, width)
    for key in range(natural - 1, min(natural, floor) - 1, -1):
        groups = _chunks(key, least, width)
        if rank(key, groups) < rank(*best):
            best = key, groups
    return best


def fit_tables(
    title: str, columns: Sequence[TableColumn], rows: Sequence[Sequence[str]], width: int
) -> list[Table]:
    """``rows`` (rich markup cells, one per column) as tables no wider than ``width`` where the
    cells allow it: one table when everything fits, else the columns split over several, each
    starting with column 0 (the key; wrapped by :func:`wrap_name`, down to
    :data:`KEY_MIN_WIDTH`, when that saves a table). No cell is ever
    cut: non-wrapping columns keep their full width and wrapping ones fold a word only when it
    alone is wider than the table."""
    cells = [[row[i] for row in rows] for i in range(len(columns))]
    natural = [_natural(c.header, cells[i]) for i, c in enumerate(columns)]
    least = [_least(c, cells[i]) for i, c in enumerate(columns)]
    key, groups = _key_width(natural[0], max(KEY_MIN_WIDTH, len(columns[0].header)), least, width)
    tables = []
    for n, group in enumerate(groups):
        head = title if n == 0 else f"{title} (continued)"
        table = Table(title=head, title_justify="left", padding=(0, 1))
        table.add_column(columns[0].header, no_wrap=True, min_width=min(key, natural[0]))
        for i in group:
            c = columns[i]
            if c.wrap:
                table.add_column(c.header, justify=c.justify, overflow="fold")
            else:
                table.add_column(c.header, justify=c.justify, no_wrap=True, min_width=natural[i])
        for row in rows:
            table.add_row(_wrap_markup(row[0], key), *(row[i] for i in group))
        tables.append(table)
    return tables


def _wrap_markup(cell: str, width: int) -> Text:
    text = Text.from_markup(cell)
    if len(text.plain) <= width:
        return text
    lines = wrap_name(text.plain, width)
    out = Text(style=text.style)
    start = 0
    for k, line in enumerate(lines):
        out.append_text(text[start : start + len(line)])
        start += len(line)
        if k < len(lines) - 1:
            out.append("\n")
    return out
