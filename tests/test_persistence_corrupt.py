"""Every corrupt, truncated or foreign state file gives a RuntimeStateError (a RegioError) that
names the file and the problem; a hypothesis fuzzer over state-file bytes and structure finds
nothing else.

Fuzz example counts: ``REGIO_FUZZ_STATE_EXAMPLES`` (default 150 per fuzzer in CI; set it to
thousands for a long run)."""

from __future__ import annotations

import json
import os
import random
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from persistence_support import driven_engine
from regio.engine import Engine
from regio.errors import RegioError, RuntimeStateError
from regio.persistence._statefile import MAX_STATE_DEPTH
from regio.tokens import CalibrationResetWarning

EXAMPLES = int(os.environ.get("REGIO_FUZZ_STATE_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

_ENGINE = driven_engine(hook=None)


def _valid(suffix: str, tmp: Path) -> bytes:
    return _ENGINE.save(tmp / f"valid{suffix}").read_bytes()


def _tree(tmp: Path) -> dict[str, Any]:
    tree: dict[str, Any] = json.loads(_valid(".json", tmp))
    return tree


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _set_in(tree: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    node: Any = tree
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return tree


_MARK = "DEEP-VALUE-MARK"


def _with_mark(tree: dict[str, Any]) -> dict[str, Any]:
    """``tree`` with the marker string as a metadata value of the first entry (an ``Any``
    field, where nothing but the depth limit bounds the nesting)."""
    tree["window"]["regions"][0]["entries"][0]["meta"] = {"x": _MARK}
    return tree


def _deep_json(tree: dict[str, Any], depth: int) -> bytes:
    return _json(_with_mark(tree)).replace(json.dumps(_MARK).encode(), b"[" * depth + b"]" * depth)


def _deep_msgpack(tree: dict[str, Any], depth: int) -> bytes:
    marker = msgspec.msgpack.encode(_MARK)
    return msgspec.msgpack.encode(_with_mark(tree)).replace(marker, b"\x91" * depth + b"\xc0")


def _region(tree: dict[str, Any], name: str) -> dict[str, Any]:
    region: dict[str, Any] = next(r for r in tree["window"]["regions"] if r["name"] == name)
    return region


def _json(tree: Any) -> bytes:
    return json.dumps(tree).encode()


# name -> (suffix, bytes from the valid JSON tree and the valid file bytes)
KINDS: dict[str, tuple[str, Callable[[dict[str, Any], bytes], bytes]]] = {
    "empty": (".json", lambda t, b: b""),
    "empty_msgpack": (".msgpack", lambda t, b: b""),
    "truncated_json": (".json", lambda t, b: b[: len(b) // 2]),
    "truncated_msgpack": (".msgpack", lambda t, b: msgspec.msgpack.encode(t)[:-7]),
    "random_bytes": (".json", lambda t, b: random.Random(1).randbytes(4096)),
    "random_bytes_msgpack": (".msgpack", lambda t, b: random.Random(2).randbytes(4096)),
    "not_utf8": (".json", lambda t, b: b.replace(b"careful", b"care\xff\xfeul")),
    "top_level_list": (".json", lambda t, b: _json([t])),
    "top_level_scalar_msgpack": (".msgpack", lambda t, b: msgspec.msgpack.encode(42)),
    "foreign_json": (".json", lambda t, b: b'{"hello": "world"}'),
    "wrong_version": (".json", lambda t, b: _json({**t, "format": "regio.engine/9"})),
    "missing_field": (".json", lambda t, b: _json({k: v for k, v in t.items() if k != "window"})),
    "wrong_type": (".json", lambda t, b: _json(_set_in(t, ("config", "model"), 5))),
    "wrong_type_msgpack": (
        ".msgpack",
        lambda t, b: msgspec.msgpack.encode(_set_in(t, ("window", "regions"), {"a": 1})),
    ),
    "huge_nesting_json": (".json", lambda t, b: _deep_json(t, 100_000)),
    "huge_nesting_msgpack": (".msgpack", lambda t, b: _deep_msgpack(t, 100_000)),
    "nesting_over_the_limit": (".json", lambda t, b: _deep_json(t, MAX_STATE_DEPTH)),
    "top_level_nesting_json": (".json", lambda t, b: b"[" * 100_000 + b"]" * 100_000),
    "huge_integer": (
        ".json",
        lambda t, b: b.replace(b'"turn":', b'"turn":' + b"9" * 5000 + b',"x":', 1),
    ),
    "unknown_region_kind": (
        ".json",
        lambda t, b: _json(_set_in(t, ("window", "regions", 0, "kind"), "wormhole")),
    ),
    "unknown_region_option": (
        ".json",
        lambda t, b: _json(_set_in(t, ("window", "regions", 0, "options", "bogus"), 1)),
    ),
    "bad_region_option": (
        ".json",
        lambda t, b: _json(_set_in(t, ("window", "regions", 0, "options", "budget"), "lots")),
    ),
    "negative_option": (
        ".json",
        lambda t, b: _json(_set_in(t, ("config", "no_progress_limit"), -3)),
    ),
    "bad_carry_forward": (
        ".json",
        lambda t, b: _json(_set_in(t, ("config", "carry_forward"), "x")),
    ),
    "bad_block": (
        ".json",
        lambda t, b: _json(_set_in(t, ("window", "regions", 0, "entries", 0, "blocks", 0), {})),
    ),
    "unknown_counter": (".json", lambda t, b: _json(_set_in(t, ("config", "tokenizer"), "nope"))),
}


def _write(tmp: Path, suffix: str, data: bytes) -> Path:
    path = tmp / f"state{suffix}"
    path.write_bytes(data)
    return path


def _assert_refused_or_loaded(path: Path) -> None:
    """Loading ``path`` either works or raises a RuntimeStateError naming the file."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CalibrationResetWarning)
            Engine.load(path)
    except RegioError as exc:
        assert isinstance(exc, RuntimeStateError), f"{type(exc).__name__}: {exc}"
        assert str(path) in str(exc), str(exc)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_corrupt_state_file_is_refused_naming_the_file_and_the_problem(
    tmp_path: Path, kind: str
) -> None:
    suffix, make = KINDS[kind]
    data = make(_tree(tmp_path), _valid(suffix, tmp_path) if suffix == ".json" else b"")
    path = _write(tmp_path, suffix, data)
    with pytest.raises(RuntimeStateError) as caught:
        Engine.load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and len(message) > len(f"{path}: ") + 10


@pytest.mark.parametrize("make", ["directory", "fifo", "device", "missing"])
def test_a_path_that_is_not_a_regular_file_is_refused_without_reading_it(
    tmp_path: Path, make: str
) -> None:
    path = tmp_path / "state.json"
    if make == "directory":
        path.mkdir()
    elif make == "fifo":
        os.mkfifo(path)  # reading it would hang
    elif make == "device":
        path = Path(os.devnull)
    with pytest.raises(RuntimeStateError, match=str(path)):
        Engine.load(path)


def test_the_depth_limit_accepts_exactly_its_depth_and_refuses_one_level_more(
    tmp_path: Path,
) -> None:
    # the marker sits 7 levels down: state, window, regions, region, entries, entry, meta
    for suffix, deep in ((".json", _deep_json), (".msgpack", _deep_msgpack)):
        path = _write(tmp_path, suffix, deep(_tree(tmp_path), MAX_STATE_DEPTH - 7))
        loaded = Engine.load(path)
        value, depth = loaded.window.regions[0].entries[0].meta["x"], 0
        while isinstance(value, list):
            value, depth = (value[0] if value else None), depth + 1
        assert depth == MAX_STATE_DEPTH - 7
        path = _write(tmp_path, suffix, deep(_tree(tmp_path), MAX_STATE_DEPTH - 6))
        with pytest.raises(RuntimeStateError, match="nested more than 200 levels"):
            Engine.load(path)


# ----- fuzzers -----------------------------------------------------------------------------
byte_edits = st.lists(
    st.tuples(
        st.sampled_from(["flip", "delete", "insert", "truncate", "duplicate"]),
        st.floats(0.0, 1.0),
        st.integers(1, 64),
        st.binary(min_size=1, max_size=8),
    ),
    min_size=1,
    max_size=4,
)


def _mutate_bytes(data: bytes, edits: list[tuple[str, float, int, bytes]]) -> bytes:
    out = bytearray(data)
    for op, where, size, extra in edits:
        i = int(where * max(len(out) - 1, 0))
        if op == "flip" and out:
            out[i] ^= extra[0] or 1
        elif op == "delete":
            del out[i : i + size]
        elif op == "insert":
            out[i:i] = extra
        elif op == "truncate":
            del out[i:]
        else:
            out[i:i] = out[i : i + size]
    return bytes(out)


@FUZZ
@given(suffix=st.sampled_from([".json", ".msgpack"]), edits=byte_edits)
def test_fuzz_mutated_state_bytes_load_or_raise_a_regio_error(
    tmp_path: Path, suffix: str, edits: list[tuple[str, float, int, bytes]]
) -> None:
    data = _mutate_bytes(_valid(suffix, tmp_path), edits)
    _assert_refused_or_loaded(_write(tmp_path, suffix, data))


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_paths(value, (*prefix, index)))
    return found


@FUZZ
@given(
    suffix=st.sampled_from([".json", ".msgpack"]),
    picks=st.lists(
        st.tuples(st.floats(0.0, 1.0), st.booleans(), json_values), min_size=1, max_size=3
    ),
)
def test_fuzz_structurally_mutated_states_load_or_raise_a_regio_error(
    tmp_path: Path, suffix: str, picks: list[tuple[float, bool, Any]]
) -> None:
    tree = _tree(tmp_path)
    for where, delete, value in picks:
        paths = _paths(tree)
        path = paths[int(where * (len(paths) - 1))]
        parent: Any = tree
        for key in path[:-1]:
            parent = parent[key]
        if delete:
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
    try:
        data = msgspec.msgpack.encode(tree) if suffix == ".msgpack" else _json(tree)
    except OverflowError:  # msgpack holds 64-bit integers only; JSON takes any
        reject()
    _assert_refused_or_loaded(_write(tmp_path, suffix, data))
