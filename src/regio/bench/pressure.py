"""Pressure: a blueprint scaled to a smaller window so that compaction and eviction fire.

``regio bench --window-tokens N`` replays a trace under :func:`scale_blueprint` ``(bp, N)``:

* the model's ``context_window`` becomes ``N`` (and ``window.max_tokens`` is dropped);
* ``max_output_tokens`` and every token count that sizes a non-pinned region (integer
  ``budget``, ``min_tokens``, ``max_tokens``) and the summarizer's ``max_summary_tokens`` are
  multiplied by ``f = N / old window`` (rounded, at least 1); percent budgets (``"50%"``)
  already follow the window;
* pinned regions keep their budgets: they hold the agent's fixed instructions, which do not
  shrink with the window (a smaller budget would refuse the system prompt, not compress it);
* a scaled integer ``budget`` is never below :data:`STATE_FLOOR_TOKENS` (or the region's own
  budget, when smaller): a small region holds one small state whose size does not follow the
  window (SWE-agent's status footer, ~20-60 tokens, in the coding example's 300-token
  ``env_state``). Scaled without the floor, that region got 18 tokens at a 12,288-token window
  and refused every footer, which then stayed in every observation; unscaled, the regions that
  never shrink would not fit that window.

Item limits (``max_items``, ``max_entries``) are kept: token pressure is what is tested. The
relief chain's sizes (``clear_at_least``, ``trim_at_least``, ``dedupe_at_least``,
``placeholder_extract_tokens``, per-tool ``max_result_tokens``, the trim character counts) are
kept as well: they size tool output, which the trace fixes, not the window
(``docs/benchmark.md`` measures scaling ``clear_at_least`` too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

import attrs

if TYPE_CHECKING:
    from regio.blueprint import Blueprint

__all__ = ["STATE_FLOOR_TOKENS", "scale_blueprint"]

#: Smallest scaled integer region budget, in tokens (module doc).
STATE_FLOOR_TOKENS = 128


@overload
def _scaled(value: int, factor: float) -> int: ...
@overload
def _scaled(value: str, factor: float) -> str: ...
@overload
def _scaled(value: None, factor: float) -> None: ...
def _scaled(value: int | str | None, factor: float) -> int | str | None:
    """An integer size (tokens) times ``factor``, at least 1; a share or ``None`` as is."""
    if isinstance(value, bool) or not isinstance(value, int):
        return value
    return max(1, round(value * factor))


def _floored(budget: int | str, factor: float) -> int | str:
    """A scaled integer region budget, at least :data:`STATE_FLOOR_TOKENS` (or ``budget``)."""
    if isinstance(budget, bool) or not isinstance(budget, int):
        return _scaled(budget, factor)
    return max(_scaled(budget, factor), min(budget, STATE_FLOOR_TOKENS))


def scale_blueprint(blueprint: Blueprint, window_tokens: int) -> Blueprint:
    """``blueprint`` (a :class:`regio.blueprint.Blueprint`) with a ``window_tokens`` window
    (module doc); at the blueprint's own window nothing is scaled (a run at the model's real
    window with the pressure run's measures). Raises ``ValueError`` when ``window_tokens`` is
    below 1,024 tokens or larger than the blueprint's window."""
    old = blueprint.model.context_window
    if blueprint.window.max_tokens is not None:
        old = min(old, blueprint.window.max_tokens)
    if window_tokens < 1024:
        raise ValueError(f"--window-tokens {window_tokens}: use at least 1024 tokens")
    if window_tokens > old:
        raise ValueError(
            f"--window-tokens {window_tokens}: the blueprint {blueprint.name!r} already has a "
            f"{old}-token window; give that one or a smaller one"
        )
    factor = window_tokens / old
    model = attrs.evolve(
        blueprint.model,
        context_window=window_tokens,
        max_output_tokens=_scaled(blueprint.model.max_output_tokens, factor),
    )
    regions = tuple(
        spec
        if spec.kind == "pinned"
        else attrs.evolve(
            spec,
            budget=_floored(spec.budget, factor),
            min_tokens=_scaled(spec.min_tokens, factor),
            max_tokens=_scaled(spec.max_tokens, factor),
        )
        for spec in blueprint.regions
    )
    summarizer = attrs.evolve(
        blueprint.summarizer,
        max_summary_tokens=_scaled(blueprint.summarizer.max_summary_tokens, factor),
    )
    return attrs.evolve(
        blueprint,
        model=model,
        window=attrs.evolve(blueprint.window, max_tokens=None),
        regions=regions,
        summarizer=summarizer,
    )
