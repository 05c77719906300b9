"""Token hysteresis of ``sliding_window`` regions: a high-water mark (the *trigger*) and a
low-water *target* below it, both in tokens (``docs/runtime.md``, "Token hysteresis").

Passing the trigger frees down to the target in one step (a compaction under ``compact``
eviction, one bulk eviction under ``bulk``); between two steps the conversation is append-only,
so its cached prefix holds still. Freeing "just enough to fit" instead evicts a little on every
request and rewrites the whole cached prefix each time.

A mark is given as tokens (``60000``) or as a share of the region's budget (``"90%"``).

The default target comes from the cache prices (:func:`cost_target`): a step rewrites the kept
tail ``R`` once at the cache-write multiplier ``w`` and the following ``(T - R) / D`` requests
read the prefix at the read multiplier ``r``. The target is the largest ``R`` whose rewrite,
spread over the requests until the next step, costs at most ``rewrite_share`` of what those
requests pay for reading the cached prefix:

    w (R - S) D / (T - R) = share * r (T + R) / 2
    =>  R = (-w D + sqrt(w^2 D^2 + share r (share r T^2 + 2 w D S))) / (share r)

with ``T`` the trigger, ``D`` the tokens added per request and ``S`` the tokens ahead of the
kept tail that stay cached. Anthropic's 5-minute cache (write 1.25x, read 0.1x,
https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#pricing) is the default
price pair; an engine replaces it with its provider's rule.
"""

from __future__ import annotations

import math
import re

from regio.errors import RegionConfigError

__all__ = [
    "DEFAULT_BULK_TRIGGER",
    "DEFAULT_COMPACT_TRIGGER",
    "DEFAULT_MULTIPLIERS",
    "DEFAULT_REWRITE_SHARE",
    "Mark",
    "check_mark",
    "cost_target",
    "resolve_mark",
]

#: A token mark: tokens, or a share of the region budget as ``"N%"`` (0 < N <= 100).
Mark = int | str

#: ``(write, read)`` cache multipliers of Anthropic's 5-minute cache (see module doc).
DEFAULT_MULTIPLIERS: tuple[float, float] = (1.25, 0.1)

#: Default trigger of ``compact`` eviction: 90% of the region budget, so the turn that passes
#: it still fits while the compaction waits for the next turn boundary.
DEFAULT_COMPACT_TRIGGER = "90%"

#: Default trigger of ``bulk`` eviction: the budget itself (bulk eviction needs no summarizer,
#: it runs in the write that would pass the mark).
DEFAULT_BULK_TRIGGER = "100%"

#: Default ``rewrite_share`` of :func:`cost_target`: chosen on the 300-turn coding-agent drive
#: (``benchmarks/drive_pressure.py``; figures in ``docs/runtime.md``).
DEFAULT_REWRITE_SHARE = 0.25

_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")


def check_mark(value: Mark | None, what: str) -> None:
    """Raise :class:`RegionConfigError` unless ``value`` is ``None``, tokens >= 1 or a percent
    string in (0, 100]."""
    if value is None:
        return
    if isinstance(value, bool) or (isinstance(value, int) and value < 1):
        raise RegionConfigError(
            f"{what} must be tokens >= 1 or a percent like '90%', got {value!r}"
        )
    if isinstance(value, str):
        match = _PERCENT.match(value)
        if match is None or not 0 < float(match.group(1)) <= 100:
            raise RegionConfigError(
                f"{what} must be tokens >= 1 or a percent of the region budget in (0, 100] "
                f"like '90%', got {value!r}"
            )


def resolve_mark(value: Mark, budget: int) -> int:
    """``value`` in tokens for a region of ``budget`` tokens (a percent is floored)."""
    if isinstance(value, int):
        return value
    match = _PERCENT.match(value)
    if match is None:
        raise RegionConfigError(f"token mark {value!r} is neither tokens nor a percent")
    return math.floor(budget * float(match.group(1)) / 100)


def cost_target(
    trigger: int,
    per_request: float,
    *,
    multipliers: tuple[float, float] = DEFAULT_MULTIPLIERS,
    rewrite_share: float = DEFAULT_REWRITE_SHARE,
    fixed: int = 0,
) -> int:
    """The low-water target (tokens) for ``trigger`` (tokens) when each request adds
    ``per_request`` tokens, under cache ``multipliers`` ``(write, read)`` (module doc).

    ``fixed``: tokens ahead of the kept tail that stay cached (``S``). The result is in
    ``[fixed, trigger - 1]``; with no growth (``per_request <= 0``) or a free read it is
    ``trigger // 2``. Raises :class:`ValueError` for a ``rewrite_share`` outside (0, 1].
    """
    if not 0 < rewrite_share <= 1:
        raise ValueError(f"rewrite_share must be in (0, 1], got {rewrite_share}")
    write, read = multipliers
    if per_request <= 0 or read <= 0 or write <= 0 or trigger <= 1:
        return max(0, trigger // 2)
    wd = write * per_request
    sr = rewrite_share * read
    root = math.sqrt(wd * wd + sr * (sr * trigger * trigger + 2 * wd * fixed))
    kept = (root - wd) / sr
    return int(min(max(kept, fixed), trigger - 1))
