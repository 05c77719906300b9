"""Why the blueprint loader structures with cattrs rather than msgspec: the figures quoted in
``docs/architecture.md`` ("Why cattrs and not msgspec").

Run with ``python benchmarks/blueprint_backends.py``. It prints

1. where loading an example blueprint spends its time: YAML (limits scan, compose, construct),
   structuring (cattrs), the checks across keys;
2. structuring 200 regions with regio's cattrs converter and with an equivalent msgspec model
   (``msgspec.Struct`` with ``Meta`` constraints and a tagged union on ``kind``);
3. how many problems each reports for one document with three independent mistakes.

This is a measurement script, not a test (pytest does not collect it).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from cattrs.errors import IterableValidationError

from regio.blueprint.convert import converter, structure_blueprint
from regio.blueprint.limits import LoaderLimits, scan_events
from regio.blueprint.messages import structure_issues
from regio.blueprint.source import Located, parse_yaml
from regio.blueprint.spec import RegionSpec
from regio.blueprint.validate import validate_semantics

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "blueprints" / "coding-agent.yaml"


def _median_ms(fn: Callable[[], object], runs: int = 30) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


# -- an msgspec model of the same region shape -----------------------------------------------
Budget = Annotated[int, msgspec.Meta(ge=0)] | Annotated[str, msgspec.Meta(pattern=r"^\d+%$")]
Volatility = Literal["stable", "grows", "rewritten"]


class _Region(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, tag_field="kind"):
    name: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_-]*$")]
    budget: Budget
    min_tokens: Annotated[int, msgspec.Meta(ge=0)] | None = None
    max_tokens: Annotated[int, msgspec.Meta(ge=0)] | None = None
    admission: Literal["evict", "reject"] = "evict"
    volatility: Volatility = "rewritten"
    description: str = ""


class Pinned(_Region, tag="pinned"):
    pass


class Temporary(_Region, tag="temporary"):
    pass


class Keyed(_Region, tag="keyed"):
    max_entries: Annotated[int, msgspec.Meta(ge=1)] | None = None


MsgRegions = list[Pinned | Temporary | Keyed]

KINDS = ("pinned", "temporary", "keyed")


def _regions(count: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(count):
        region: dict[str, Any] = {"name": f"r{i}", "kind": KINDS[i % 3], "budget": 100 + i}
        if i % 3 == 2:
            region["max_entries"] = 5
        if i % 2:
            region["volatility"] = "grows"
        out.append(region)
    return out


def main() -> None:
    text = EXAMPLE.read_text()
    limits = LoaderLimits()
    located = parse_yaml(text)
    blueprint = structure_blueprint(located.data)
    yaml_ms = _median_ms(lambda: (scan_events(text, limits), parse_yaml(text)))
    structure_ms = _median_ms(lambda: structure_blueprint(located.data))
    semantics_ms = _median_ms(lambda: validate_semantics(blueprint, located.line))
    total = yaml_ms + structure_ms + semantics_ms
    print(f"{EXAMPLE.name}: YAML {yaml_ms:.2f} ms, structuring (cattrs) {structure_ms:.2f} ms, ")
    print(f"  checks across keys {semantics_ms:.2f} ms; structuring is {structure_ms / total:.1%}")

    data = _regions(200)
    region_tuple = tuple[RegionSpec, ...]
    cattrs_ms = _median_ms(lambda: converter.structure(data, region_tuple))
    msgspec_ms = _median_ms(lambda: msgspec.convert(data, MsgRegions))
    print(
        f"200 regions: cattrs (detailed validation) {cattrs_ms:.2f} ms, msgspec {msgspec_ms:.3f} ms"
    )

    bad = [
        {"name": "a", "kind": "pinned", "budget": -5},
        {"name": "b", "kind": "temporary", "budget": 10, "colour": "red"},
        {"name": "c", "kind": "keyed", "budget": 10, "volatility": "stabel"},
    ]
    try:
        converter.structure(bad, region_tuple)
        issues = []
    except IterableValidationError as exc:
        issues = structure_issues(exc, Located(bad, {}))
    print(f"three mistakes: cattrs reports {len(issues)}:")
    for issue in issues:
        print(f"  {issue.path}: {issue.message}")
    try:
        msgspec.convert(bad, MsgRegions)
    except msgspec.ValidationError as exc:
        print(f"  msgspec reports 1: {exc}")


if __name__ == "__main__":
    main()
