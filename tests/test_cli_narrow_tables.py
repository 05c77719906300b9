"""Tables at 80 columns: compact numbers, wrapped names, never a cut digit or name.

The real commands (``regio validate``, ``regio bench``) run with ``COLUMNS=80``; their tables
are parsed back cell by cell and compared with what the command was asked to show.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from rich.console import Console

from regio.bench.peers import peer_available
from regio.blueprint import load_blueprint
from regio.blueprint.validate import resolved_budget
from regio.cli import main
from regio.console import TableColumn, compact_number, fit_tables, stdout_console, wrap_name

ROOT = Path(__file__).resolve().parents[1]
BLUEPRINTS = sorted((ROOT / "examples" / "blueprints").glob("*.yaml"))
NUMBER = re.compile(r"^-?\d+(\.\d)?[kMGT]?$")


def _tables(text: str) -> list[list[list[str]]]:
    """Every boxed table in ``text`` as its body lines split into stripped cells."""
    tables: list[list[list[str]]] = []
    body = False
    for line in text.splitlines():
        if line.startswith("┡"):
            body = True
            tables.append([])
        elif line.startswith("└"):
            body = False
        elif body and line.startswith("│"):
            tables[-1].append([c.strip() for c in line.strip().strip("│").split("│")])
    return tables


def _headers(text: str) -> list[list[str]]:
    return [
        [c.strip() for c in line.strip().strip("┃").split("┃")]
        for line in text.splitlines()
        if line.startswith("┃")
    ]


def _column(table: list[list[str]], index: int) -> list[str]:
    return [row[index] for row in table if row[index]]


def _assert_fits(text: str, width: int) -> None:
    assert "…" not in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= width


# ------------------------------------------------------------------ helpers, as properties


@given(st.text(alphabet="abcdef-_:.xyz ", min_size=1, max_size=60), st.integers(1, 30))
def test_wrapped_name_joins_back_and_no_line_exceeds_the_width(name: str, width: int) -> None:
    lines = wrap_name(name, width)
    assert "".join(lines) == name
    assert all(len(line) <= width for line in lines)


@given(st.integers(0, 10**14))
def test_compact_number_is_short_and_reads_back_within_rounding(n: int) -> None:
    text = compact_number(n)
    assert NUMBER.match(text) and len(text) <= 6
    scale = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}.get(text[-1], 1.0)
    value = float(text.rstrip("kMGT")) * scale
    assert abs(value - n) <= 0.05 * scale


def test_compact_numbers_from_a_thousand_show_one_decimal_and_a_k_or_m_suffix() -> None:
    assert [compact_number(n) for n in (999, 1000, 43_210, 999_950, 2_300_000)] == [
        "999",
        "1.0k",
        "43.2k",
        "1.0M",
        "2.3M",
    ]


names = st.text(alphabet="abcdefgh-_", min_size=1, max_size=30)
numbers = st.integers(0, 10**12).map(lambda n: f"{n:,}")


@given(
    st.lists(st.tuples(names, numbers, numbers, numbers, numbers), min_size=1, max_size=6),
    st.integers(40, 120),
)
@example(  # a wide key and one wide number: the key must wrap so the second table fits
    [("_", "0", "0", "0", "0")] * 4
    + [("_", "0", "0", "0", "1,000,000,000"), ("_" * 22, "0", "0", "0", "0")],
    40,
)
def test_fitted_tables_keep_every_cell_whole_at_any_width(rows, width) -> None:
    columns = [TableColumn("name"), *(TableColumn(f"n{i}", justify="right") for i in range(4))]
    out = io.StringIO()
    console = Console(file=out, width=width)
    for table in fit_tables("t", columns, [list(r) for r in rows], width):
        console.print(table)
    text = out.getvalue()
    assert "…" not in text
    tables = _tables(text)
    headers = _headers(text)
    want = {f"n{i}": [r[i + 1] for r in rows] for i in range(4)}
    seen: dict[str, list[str]] = {}
    for header, table in zip(headers, tables, strict=True):
        assert "".join(_column(table, 0)) == "".join(r[0] for r in rows)
        for index, name in enumerate(header[1:], start=1):
            seen[name] = _column(table, index)
    assert seen == want


# ------------------------------------------------------------------ the real commands


@pytest.mark.parametrize("path", BLUEPRINTS, ids=lambda p: p.stem)
def test_validate_at_80_columns_cuts_no_region_name_or_number(path, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["validate", str(path)]) == 0
    text = capsys.readouterr().out
    _assert_fits(text, 80)
    bp = load_blueprint(path)
    tables = _tables(text)
    headers = _headers(text)
    assert len(tables) >= 1
    names = "".join(r.name for r in bp.regions)
    tokens = [f"{resolved_budget(r, bp.window_tokens):,}" for r in bp.regions]
    found_tokens = []
    for header, table in zip(headers, tables, strict=True):
        assert header[0] == "region" and "".join(_column(table, 0)) == names
        if "tokens" in header:
            found_tokens = _column(table, header.index("tokens"))
    assert found_tokens == tokens


def test_console_width_follows_columns_off_a_terminal(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert stdout_console().width == 80
    monkeypatch.delenv("COLUMNS")
    assert stdout_console().width == 120  # pytest's stdout is not a terminal


def test_bench_at_80_columns_cuts_no_strategy_name_or_digit(monkeypatch, capsys, tmp_path):
    if not peer_available("agent-framework-truncation"):
        pytest.skip("the bench extra is not installed: no package for agent-framework-truncation")
    monkeypatch.setenv("COLUMNS", "80")
    trace = ROOT / "examples" / "traces" / "mini-swe-agent" / "local.traj.json"
    blueprint = ROOT / "examples" / "blueprints" / "coding-agent.yaml"
    report = tmp_path / "report.json"
    argv = ["bench", "--trace", str(trace), "--blueprint", str(blueprint), "--json", str(report)]
    assert main([*argv, "--layouts", "recorded,regio,agent-framework-truncation"]) == 0
    text = capsys.readouterr().out
    _assert_fits(text, 80)
    tables = _tables(text)
    headers = _headers(text)
    assert len(tables) >= 2
    layouts = "recordedregioagent-framework-truncation"
    columns: set[str] = set()
    for header, table in zip(headers, tables, strict=True):
        assert header[0] == "strategy" and "".join(_column(table, 0)) == layouts
        columns.update(header[1:])
        for name in ("calls", "prompt", "broken"):
            if name in header:
                cells = _column(table, header.index(name))
                assert len(cells) == 3 and all(NUMBER.match(c) for c in cells), cells
        if "cost" in header:
            cells = _column(table, header.index("cost"))
            assert len(cells) == 3, cells
            assert all(re.fullmatch(r"\$\d[\d,]*(\.\d{4})?", c) for c in cells), cells
    # every column of the full table is shown once per cache model
    assert {"calls", "prompt", "hit", "cost", "vs rec", "vs peer"} <= columns
