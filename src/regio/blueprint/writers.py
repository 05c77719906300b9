"""Writers a blueprint declares that replace what they stored (DESIGN.md section 3 item 7).

A ``grows`` region sits before the conversation: a write that removes or rewrites one of its
entries changes bytes before the conversation, and the provider writes everything after it to
its cache again. Some writers a blueprint declares do that by construction:

* ``park`` (capture) keeps only the newest ``keep`` parked outputs (default 1): every park past
  the ``keep``-th removes the oldest;
* ``footer`` (capture) replaces the last state it wrote (under its ``key`` in a keyed region,
  the whole content in any other);
* a relief ``route`` with a ``route_key`` writes each result of its tool under a key built
  from the call's arguments: a second call with the same arguments (a file read again)
  replaces the first result.

:func:`replacing_writers` names them per region. :func:`regio.blueprint.build_window` gives
each such region its writer (``Region.replacing_writer``), so the ``regio`` layout places it in
the tail, where a replacement invalidates only itself, from the first request whatever its
declared volatility (:mod:`regio.layout.observe`); :func:`writer_warnings` says so, once per
region, when the declaration says ``stable`` or ``grows``. Writers that replace only
sometimes are left to the layout's observation, which moves a region when its writes really
remove or rewrite entries: ``lookup`` (replaces only when the same key is looked up again), a
``route`` into a ``temporary`` or ``clearable`` region (appends until the region is full) and a
``system_prompt`` capture (written once, when the agent's prompt is read).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from regio.blueprint.capturespec import CaptureSpec
    from regio.blueprint.regionspec import RegionSpec
    from regio.blueprint.reliefspec import ReliefSpec

__all__ = ["replacing_writers", "writer_warnings"]

Warn = Callable[[tuple["str | int", ...], str], None]


def _capture_writer(cap: CaptureSpec) -> str:
    """The phrase for a capture rule that replaces what it stored, else ``""``."""
    if cap.rule == "park":
        keep = cap.keep or 1
        outputs = "output" if keep == 1 else "outputs"
        return f"the park capture (it keeps the newest {keep} parked {outputs})"
    if cap.rule == "footer":
        return "the footer capture (each new state replaces the last)"
    return ""


def replacing_writers(
    regions: Sequence[RegionSpec], relief: ReliefSpec | None = None
) -> dict[str, str]:
    """Region name -> the declared writer that replaces what it stored there (module doc),
    for region specs ``regions`` (``name``, ``capture``) and the blueprint's ``relief`` spec
    (its ``tools``' ``route`` / ``route_key``; ``None``: none). A region with several gets
    the first, in declaration order (captures before routes)."""
    out: dict[str, str] = {}
    for spec in regions:
        for cap in getattr(spec, "capture", ()):
            phrase = _capture_writer(cap)
            if phrase and spec.name not in out:
                out[spec.name] = phrase
    if relief is not None and getattr(relief, "enabled", False):
        for tool in relief.tools:
            if tool.route is not None and tool.route_key is not None and tool.route not in out:
                out[str(tool.route)] = (
                    f"the relief route of {tool.name!r} results (under {tool.route_key!r}, so "
                    "a call with the same arguments replaces the earlier result)"
                )
    return out


def writer_warnings(regions: Sequence[RegionSpec], relief: ReliefSpec | None, warn: Warn) -> None:
    """Warn at ``regions[i].volatility`` for each region declared ``stable`` or ``grows``
    whose declared writer replaces what it stored (:func:`replacing_writers`): the ``regio``
    layout places it in the tail instead."""
    writers = replacing_writers(regions, relief)
    for index, spec in enumerate(regions):
        writer = writers.get(spec.name)
        if writer is None or spec.volatility not in ("stable", "grows"):
            continue
        warn(
            ("regions", index, "volatility"),
            f"region {spec.name!r} is declared {spec.volatility}, but {writer} removes or "
            "rewrites entries: laid out before the conversation, every replacement would "
            "re-write everything after the region to the cache. The regio layout places it "
            "as rewritten (the tail, after the conversation), where a replacement invalidates "
            "only itself; declare `volatility: rewritten` to say so",
        )
