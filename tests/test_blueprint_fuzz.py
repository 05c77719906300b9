"""Fuzzing the blueprint loader: every input is a Blueprint or a BlueprintError.

Inputs: the example blueprints mutated structurally (values replaced by values of any type,
keys deleted, renamed or added, items duplicated) and textually (YAML punctuation inserted,
spans deleted, lines duplicated), and random YAML text. Each refusal must be a
:class:`BlueprintError` whose every issue names a line and prints as one line.

CI runs ``REGIO_FUZZ_EXAMPLES`` examples per test (default 150, three tests: 450 inputs); set it
higher to run long, e.g. ``REGIO_FUZZ_EXAMPLES=20000 pytest tests/test_blueprint_fuzz.py``.
Speed and memory (a 4 KiB input within 1 s and 100 MiB) are checked in
``benchmarks/test_bench_blueprint_limits.py``, not here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.blueprint import Blueprint, BlueprintError, load_blueprint

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples" / "blueprints").glob("*.yaml"))
EXAMPLE_TEXTS = [p.read_text(encoding="utf-8") for p in EXAMPLES]
EXAMPLE_DATA = [yaml.safe_load(t) for t in EXAMPLE_TEXTS]
BASE_DIR = ROOT / "examples" / "blueprints"

FUZZ = settings(
    max_examples=int(os.environ.get("REGIO_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

WORDS = [
    "kind",
    "name",
    "budget",
    "seed",
    "file",
    "regions",
    "version",
    "model",
    "volatility",
    "hashmap",
    "keyed",
    "compact_history",
    "sliding_window",
    "custom",
    "capture",
    "rule",
    "eviction",
    "strategy",
    "source",
    "12%",
    "150%",
    "../x",
    "/dev/zero",
    "policy.md",
    "{now}",
    "",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**40, max_value=10**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(WORDS),
    st.text(max_size=20),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(WORDS) | st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
PUNCTUATION = [
    *"-:[]{}&*!|>'\"#,?%@\n\t ",
    *("&a ", "*a", "<<: ", "\n  ", "\x85", "\u2028", "\ufeff", "2001-13-40"),
    *("!!int ", "!!str ", "!!float ", "!!binary ", "!!set ", "!!timestamp ", "!!omap ", "!!pairs "),
]


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += _paths(value, (*path, index))
    return out


def _copy(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _copy(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_copy(v) for v in node]
    return node


@st.composite
def mutated_data(draw: st.DrawFn) -> Any:
    data = _copy(draw(st.sampled_from(EXAMPLE_DATA)))
    for _ in range(draw(st.integers(1, 4))):
        paths = _paths(data)
        path = draw(st.sampled_from(paths))
        if not path:
            continue
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        last = path[-1]
        action = draw(st.sampled_from(["replace", "delete", "add", "rename", "duplicate"]))
        if action == "replace":
            parent[last] = draw(VALUES)
        elif action == "delete":
            del parent[last]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(WORDS) | st.text(max_size=8))] = draw(VALUES)
        elif action == "rename" and isinstance(parent, dict):
            parent[draw(st.sampled_from(WORDS))] = parent.pop(last)
        elif action == "duplicate" and isinstance(parent, list):
            parent.append(_copy(parent[last]))
    return data


@st.composite
def mutated_text(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(EXAMPLE_TEXTS))
    for _ in range(draw(st.integers(1, 5))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "duplicate_line"]))
        if action == "insert":
            text = text[:at] + draw(st.sampled_from(PUNCTUATION) | st.text(max_size=3)) + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)) :]
        else:
            lines = text.splitlines(keepends=True)
            index = min(at, len(lines) - 1)
            lines.insert(index, lines[index])
            text = "".join(lines)
    return text


RANDOM_YAML = st.lists(
    st.sampled_from(PUNCTUATION) | st.sampled_from([*"abkn019.e_%x", "name", "kind", "regions"]),
    max_size=150,
).map("".join)


def _accepted_or_refused(text: str) -> None:
    try:
        result = load_blueprint(text, base_dir=BASE_DIR)
    except BlueprintError as exc:
        assert exc.issues, "a BlueprintError names at least one issue"
        for issue in exc.issues:
            assert issue.line is not None, f"issue without a line: {issue}"
        lines = str(exc).splitlines()
        assert len(lines) == len(exc.issues), "each issue prints as exactly one line"
        return
    assert isinstance(result, Blueprint)


@FUZZ
@given(data=mutated_data())
def test_a_structurally_mutated_example_is_accepted_or_refused_with_a_blueprint_error(
    data: Any,
) -> None:
    _accepted_or_refused(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


@FUZZ
@given(text=mutated_text())
def test_a_textually_mutated_example_is_accepted_or_refused_with_a_blueprint_error(
    text: str,
) -> None:
    _accepted_or_refused(text)


@FUZZ
@given(text=RANDOM_YAML | st.text(max_size=200))
def test_random_yaml_is_accepted_or_refused_with_a_blueprint_error(text: str) -> None:
    if "\n" not in text:
        text += "\n"  # one-line text without a newline may be read as a file name
    _accepted_or_refused(text)
