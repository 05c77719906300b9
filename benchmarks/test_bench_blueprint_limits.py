"""A 4 KiB blueprint of any shape is accepted or refused within 1 s and 100 MiB.

Shapes: the worst cases for each loader stage (alias bombs at and just under the node limit,
deep flow and block nesting, long flat lists and mappings, one long string, a huge integer,
many regions, the example blueprints padded to 4 KiB) and 300 random 4 KiB texts built from
YAML punctuation and blueprint words (fixed seed). Time is the best of 3 runs
(``time.perf_counter``), memory the peak of Python allocations during one load
(``tracemalloc``). Both are printed (``-s``); the assertion is the acceptance bound.

Run with ``pytest benchmarks/test_bench_blueprint_limits.py -s``.
"""

from __future__ import annotations

import random
import time
import tracemalloc
from pathlib import Path

import pytest

from regio.blueprint import Blueprint, BlueprintError, load_blueprint

ROOT = Path(__file__).resolve().parents[1]
SIZE = 4096
MAX_SECONDS = 1.0
MAX_BYTES = 100 * 1024 * 1024


def _pad(text: str) -> str:
    """``text`` cut or padded (with a comment line) to exactly SIZE bytes."""
    data = text.encode()[: SIZE - 2]
    filler = SIZE - len(data) - 3
    return data.decode("utf-8", "ignore") + ("\n#" + "x" * filler + "\n" if filler > 0 else "\n")


def _bomb(levels: int, width: int) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def _near_limit_regions() -> str:
    """Regions repeated by alias until the document is just under the default node limit."""
    region = "{name: r, kind: keyed, budget: 1, seed: &s [a, b, c, d, e, f, g, h]}"
    refs = ", ".join(["*r"] * 900)
    return (
        "version: 1\nname: x\nmodel: {provider: anthropic, name: m, context_window: 100000}\n"
        f"regions: [&r {region}, {refs}]\n"
    )


SHAPES: dict[str, str] = {
    "alias_bomb_7x9": _bomb(7, 9),
    "alias_bomb_40x40": _bomb(40, 40),
    "aliases_near_node_limit": _near_limit_regions(),
    "flow_nesting": "[" * (SIZE // 2) + "]" * (SIZE // 2),
    "mapping_nesting": "{a: " * (SIZE // 5),
    "block_nesting": "".join("  " * i + "k:\n" for i in range(60)),
    "flat_list": "[" + "1," * (SIZE // 2 - 2) + "1]",
    "flat_mapping": "".join(f"k{i}: {i}\n" for i in range(600)),
    "long_string": "name: " + "x" * (SIZE - 8),
    "long_integer": "version: " + "9" * (SIZE - 12),
    "many_regions": "version: 1\nname: x\nmodel: {provider: a, name: m, context_window: 9}\n"
    "regions:\n" + "".join(f"  - {{name: r{i}, budget: 1}}\n" for i in range(150)),
    **{
        f"example_{p.stem}": p.read_text()
        for p in (ROOT / "examples" / "blueprints").glob("*.yaml")
    },
}

_TOKENS = [*"-:[]{}&*!|>'\"#,?%@\n ", "&a ", "*a", "name", "kind", "regions", "  ", "\n  - "]


def _random_texts(count: int) -> list[str]:
    rng = random.Random(14)
    return ["".join(rng.choice(_TOKENS) for _ in range(SIZE)) for _ in range(count)]


def _load(text: str) -> str:
    try:
        result = load_blueprint(text, base_dir=ROOT / "examples" / "blueprints")
    except BlueprintError:
        return "refused"
    assert isinstance(result, Blueprint)
    return "accepted"


def _measure(text: str) -> tuple[str, float, int]:
    seconds = []
    outcome = ""
    for _ in range(3):
        start = time.perf_counter()
        outcome = _load(text)
        seconds.append(time.perf_counter() - start)
    tracemalloc.start()
    try:
        _load(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return outcome, min(seconds), peak


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_4kib_blueprint_of_each_shape_loads_or_is_refused_within_1s_and_100mib(
    shape: str,
) -> None:
    text = _pad(SHAPES[shape])
    assert len(text.encode()) <= SIZE
    outcome, seconds, peak = _measure(text)
    print(f"{shape:28s} {outcome:8s} {seconds * 1000:8.1f} ms {peak / 2**20:7.2f} MiB")
    assert seconds < MAX_SECONDS, f"{shape}: {seconds:.2f} s"
    assert peak < MAX_BYTES, f"{shape}: {peak / 2**20:.0f} MiB"


def test_random_4kib_yaml_loads_or_is_refused_within_1s_and_100mib() -> None:
    worst_seconds = 0.0
    worst_peak = 0
    for text in _random_texts(300):
        _, seconds, peak = _measure(_pad(text))
        worst_seconds = max(worst_seconds, seconds)
        worst_peak = max(worst_peak, peak)
    print(f"random x300: worst {worst_seconds * 1000:.1f} ms, {worst_peak / 2**20:.2f} MiB")
    assert worst_seconds < MAX_SECONDS
    assert worst_peak < MAX_BYTES
