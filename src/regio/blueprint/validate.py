"""Semantic validation of a structured blueprint: checks that need more than one key.

Errors (returned as :class:`BlueprintIssue`, raised together by the loader):

* region names are unique;
* budgets resolve against the window (percent in (0, 100]; no single region larger than the
  window) and the window leaves room after the output reserve;
* ``compact_history.source`` names an existing region that produces summaries (a ``compacting``
  region or a ``sliding_window`` with ``compact`` eviction), and every summary producer has
  exactly one ``compact_history`` receiving it;
* the regions that never shrink (``pinned``, ``keyed``, ``checklist``, ``compact_history`` and
  any ``admission: reject`` region) fit in the window, else the error lists them
  with their budgets and the window size;
* a ``stable`` or ``grows`` region's seed holds no clock template variable (``{now}``,
  ``{{ time }}``, ...): it would change the cached prefix on every turn;
* seeds fit their kind (keyed entries need a key, only a conversation has roles);
* ``capture`` rules take only their own keys, patterns compile, keys fit the region kind
  (:func:`regio.blueprint.capturespec.check_captures`).

Warnings (:class:`BlueprintWarning`): no region can ever shrink; a ``stable`` region of a kind
written every turn; a ``stable`` or ``grows`` region whose declared writer replaces what it
stored (:mod:`regio.blueprint.writers`: the ``regio`` layout places it in the tail); a window
larger than the model's; clamps that conflict; a custom region without hooks; a trigger above
its budget; more than one conversation; a conversation that evicts or compacts on every turn
(:mod:`regio.blueprint.pressure`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import attrs

from regio.blueprint.capturespec import check_captures
from regio.blueprint.errors import BlueprintIssue, BlueprintWarning, suggest
from regio.blueprint.pressure import check_pressure
from regio.blueprint.reliefspec import check_relief
from regio.blueprint.source import format_path
from regio.blueprint.spec import (
    CLOCK_WORDS,
    Blueprint,
    CompactHistorySpec,
    CompactingSpec,
    CustomSpec,
    RegionSpec,
    SeedEntry,
    SeedFile,
    SlidingWindowSpec,
)
from regio.blueprint.toolroom import check_tool_room, check_trigger_floor
from regio.blueprint.writers import writer_warnings
from regio.errors import RegionConfigError
from regio.policies.budget import Budget

__all__ = [
    "LineOf",
    "clock_variables",
    "never_shrinks",
    "produces_summaries",
    "resolved_budget",
    "validate_semantics",
]

#: Maps a path like ``("regions", 3, "budget")`` to its 1-based line (or ``None``).
LineOf = Callable[[Sequence["str | int"]], "int | None"]

_TEMPLATE_VARS = re.compile(
    r"\{\{-?\s*(?P<jinja>[A-Za-z_][\w.]*)[^{}]*?\}\}"
    r"|\$\{(?P<shell>[A-Za-z_][\w.]*)\}"
    r"|%\((?P<percent>[A-Za-z_]\w*)\)[sd]"
    r"|(?<!\{)\{(?P<format>[A-Za-z_][\w.]*)(?:[:!][^{}]*)?\}(?!\})"
)


def clock_variables(text: str) -> list[str]:
    """Template placeholders in ``text`` that stand for a clock value, as written
    (``{now}``, ``{{ time }}``, ``{current_time}``, ``${date}``, ``%(timestamp)s``).

    A placeholder counts when one of the words of its name (split at ``_``, ``.``, ``-``) is in
    :data:`~regio.blueprint.spec.CLOCK_WORDS` (now, time, date, datetime, timestamp, today,
    ...).
    """
    found: list[str] = []
    for match in _TEMPLATE_VARS.finditer(text):
        name = next(g for g in match.groups() if g is not None)
        words = {w for w in re.split(r"[_.\-]", name.lower()) if w}
        if words & CLOCK_WORDS and match.group(0) not in found:
            found.append(match.group(0))
    return found


def produces_summaries(spec: RegionSpec) -> bool:
    """True for a region whose content is compacted into a ``compact_history``."""
    if isinstance(spec, CompactingSpec):
        return True
    return isinstance(spec, SlidingWindowSpec) and spec.eviction.strategy == "compact"


def never_shrinks(spec: RegionSpec) -> bool:
    """True for a region that window reclaim never touches."""
    return type(spec).never_shrinks or spec.admission == "reject"


def _can_shrink(spec: RegionSpec) -> bool:
    if never_shrinks(spec):
        return False
    if isinstance(spec, CustomSpec):
        return spec.on_overflow is not None
    return True


def resolved_budget(spec: RegionSpec, window_tokens: int) -> int:
    """The region's budget in tokens for a window of ``window_tokens`` (percent floor, then
    ``max_tokens`` cap, then ``min_tokens`` floor; :class:`regio.policies.budget.Budget`)."""
    budget = Budget.of(spec.budget, min_tokens=spec.min_tokens, max_tokens=spec.max_tokens)
    return budget.resolve(window_tokens)


def _seed_texts(spec: RegionSpec) -> list[tuple[tuple[str | int, ...], str]]:
    """(path below the region, text) for every seed text of the region."""
    if spec.seed is None:
        return []
    if isinstance(spec.seed, SeedFile):
        return [(("seed", "file"), spec.seed.text or "")]
    if len(spec.seed) == 1:
        return [(("seed",), spec.seed[0].text)]
    return [(("seed", i), entry.text) for i, entry in enumerate(spec.seed)]


class _Report:
    def __init__(self, line_of: LineOf) -> None:
        self.line_of = line_of
        self.issues: list[BlueprintIssue] = []
        self.warnings: list[BlueprintWarning] = []

    def error(self, path: tuple[str | int, ...], message: str) -> None:
        self.issues.append(BlueprintIssue(format_path(path), self.line_of(path), message))

    def warn(self, path: tuple[str | int, ...], message: str) -> None:
        self.warnings.append(BlueprintWarning(format_path(path), self.line_of(path), message))


def validate_semantics(
    blueprint: Blueprint, line_of: LineOf | None = None
) -> tuple[list[BlueprintIssue], list[BlueprintWarning]]:
    """All semantic issues and warnings of ``blueprint`` (see the module docstring).

    ``line_of`` maps a YAML path to its line; without it lines are ``None``.
    """
    report = _Report(line_of or (lambda path: None))
    _check_window(blueprint, report)
    names = _check_names(blueprint, report)
    budgets = _check_budgets(blueprint, report)
    _check_compaction_pairs(blueprint, names, report)
    _check_floors(blueprint, budgets, report)
    _check_volatility(blueprint, report)
    _check_seeds(blueprint, report)
    check_captures(blueprint.regions, report.error)
    check_relief(blueprint.relief, blueprint.regions, report.error)
    _check_misc(blueprint, budgets, report)
    _check_cache_profile(blueprint, report)
    _check_context_management(blueprint, report)
    check_pressure(blueprint, budgets, report.warn)
    fixed = {i: n for i, n in budgets.items() if never_shrinks(blueprint.regions[i])}
    check_tool_room(blueprint, budgets, fixed, report.warn)
    seeds = [text for i in fixed for _, text in _seed_texts(blueprint.regions[i])]
    check_trigger_floor(blueprint, fixed, seeds, report.warn)
    return report.issues, report.warnings


def _check_context_management(bp: Blueprint, report: _Report) -> None:
    """``context_management`` is Anthropic's server-side context editing
    (https://platform.claude.com/docs/en/build-with-claude/context-editing): an error for any
    other provider, a warning when it names no edit."""
    spec = bp.context_management
    if spec is None:
        return
    if bp.model.provider != "anthropic":
        report.error(
            ("context_management",),
            f"context_management is Anthropic's server-side context editing; model.provider is "
            f"{bp.model.provider!r}, whose API has no such field: remove the section (or use "
            "an anthropic model)",
        )
    elif spec.clear_tool_uses is None and spec.clear_thinking is None:
        report.warn(
            ("context_management",),
            "context_management names no edit (clear_tool_uses, clear_thinking): nothing is sent",
        )


def _check_cache_profile(bp: Blueprint, report: _Report) -> None:
    """The cache profile must resolve in regio's cache rules data: an
    error for an explicit ``cache.profile``, a warning for the one derived from ``model``."""
    from regio.cache.types import CacheRuleError
    from regio.providers import cache_model_for

    try:
        cache_model_for(bp.cache_profile)
    except CacheRuleError as exc:
        if bp.cache.profile is not None:
            report.error(("cache", "profile"), f"unknown cache profile: {exc}")
        else:
            report.warn(
                ("model", "provider"),
                f"no cache profile for {bp.cache_profile!r} ({exc}); set cache.profile to "
                "simulate the provider's prefix cache",
            )


def _check_window(bp: Blueprint, report: _Report) -> None:
    model = bp.model
    limit = model.context_window
    if bp.window.max_tokens is not None:
        if bp.window.max_tokens > model.context_window:
            report.warn(
                ("window", "max_tokens"),
                f"window.max_tokens ({bp.window.max_tokens}) is larger than model.context_window "
                f"({model.context_window}); the model's window is used",
            )
        limit = min(limit, bp.window.max_tokens)
    if model.max_output_tokens >= limit:
        report.error(
            ("model", "max_output_tokens"),
            f"max_output_tokens ({model.max_output_tokens}) leaves no room for the prompt: the "
            f"window is {limit} tokens; lower it below {limit}",
        )
    summarizer = bp.summarizer
    summarizer_window = summarizer.context_window or model.context_window
    if summarizer.max_summary_tokens >= summarizer_window:
        default = attrs.fields(type(summarizer)).max_summary_tokens.default
        source = ", the default" if summarizer.max_summary_tokens == default else ""
        report.error(
            ("summarizer", "max_summary_tokens"),
            f"max_summary_tokens ({summarizer.max_summary_tokens}{source}) must be below the "
            f"summarizer's context window ({summarizer_window} tokens); set "
            f"summarizer.max_summary_tokens to at most {max(1, summarizer_window // 4)}",
        )


def _check_names(bp: Blueprint, report: _Report) -> dict[str, int]:
    names: dict[str, int] = {}
    for index, spec in enumerate(bp.regions):
        if spec.name in names:
            first = names[spec.name]
            line = report.line_of(("regions", first, "name"))
            where = f" (line {line})" if line is not None else ""
            report.error(
                ("regions", index, "name"),
                f"region name {spec.name!r} is already used by regions[{first}]{where}; "
                "region names must be unique",
            )
        else:
            names[spec.name] = index
    return names


def _check_budgets(bp: Blueprint, report: _Report) -> dict[int, int]:
    window = bp.window_tokens
    budgets: dict[int, int] = {}
    for index, spec in enumerate(bp.regions):
        try:
            budgets[index] = resolved_budget(spec, max(window, 0))
        except RegionConfigError as exc:
            report.error(("regions", index, "budget"), f'{exc}; e.g. 2000 or "12%"')
            continue
        low, high = spec.min_tokens, spec.max_tokens
        if low is not None and high is not None and low > high:
            report.warn(
                ("regions", index, "min_tokens"),
                f"min_tokens ({low}) is above max_tokens ({high}); the floor wins",
            )
        if spec.cap is not None and window > 0:
            cap = Budget.of(spec.cap).resolve(window)
            if cap < budgets[index]:
                report.warn(
                    ("regions", index, "cap"),
                    f"cap ({cap} tokens) is below the region's budget ({budgets[index]} "
                    "tokens); the budget, the floor it is guaranteed, wins",
                )
        if window > 0 and budgets[index] > window:
            report.error(
                ("regions", index, "budget"),
                f"region {spec.name!r} resolves to {budgets[index]} tokens, more than the whole "
                f"window ({window} tokens = min(window.max_tokens, model.context_window) - "
                "model.max_output_tokens); lower the budget or its min_tokens",
            )
    total = sum(budgets.values())
    if window > 0 and total > window:
        report.warn(
            ("regions",),
            f"the region budgets add up to {total} tokens, {total / window:.0%} of the "
            f"{window}-token window: the regions cannot all be full at once, so the window "
            "reclaims (clearable, temporary, compacting) at its high-water mark and refuses "
            "writes past it; lower some budgets if every region must fit",
        )
    return budgets


def _check_compaction_pairs(bp: Blueprint, names: dict[str, int], report: _Report) -> None:
    receivers: dict[str, int] = {}
    for index, spec in enumerate(bp.regions):
        if not isinstance(spec, CompactHistorySpec):
            continue
        path = ("regions", index, "source")
        producers = [r.name for r in bp.regions if produces_summaries(r)]
        allowed = (
            f"regions that produce summaries: {', '.join(producers)}"
            if producers
            else "no region produces summaries yet: add a compacting region or a "
            "sliding_window with eviction: {strategy: compact}"
        )
        if spec.source not in names:
            hint = suggest(spec.source, list(names))
            report.error(
                path,
                f"source {spec.source!r} is not a region of this blueprint.{hint} "
                f"Allowed: {allowed}",
            )
            continue
        source = bp.regions[names[spec.source]]
        if not produces_summaries(source):
            report.error(
                path,
                f"source {spec.source!r} is a {source.kind} region, which produces no summaries; "
                f"allowed: {allowed}",
            )
            continue
        if spec.source in receivers:
            report.error(
                path,
                f"region {spec.source!r} already sends its summaries to "
                f"{bp.regions[receivers[spec.source]].name!r}; one compact_history per source",
            )
            continue
        receivers[spec.source] = index
    for index, spec in enumerate(bp.regions):
        if produces_summaries(spec) and spec.name not in receivers:
            where: tuple[str | int, ...] = (
                ("regions", index, "eviction", "strategy")
                if isinstance(spec, SlidingWindowSpec)
                else ("regions", index, "name")
            )
            report.error(
                where,
                f"region {spec.name!r} ({spec.kind}) produces summaries but no compact_history "
                f"receives them; add a region {{kind: compact_history, source: {spec.name}}}",
            )
        if isinstance(spec, CompactingSpec) and spec.target >= spec.compact_at:
            report.error(
                ("regions", index, "target"),
                f"target ({spec.target}) must be below compact_at ({spec.compact_at}); a "
                "compaction has to free room (hysteresis)",
            )


def _check_floors(bp: Blueprint, budgets: dict[int, int], report: _Report) -> None:
    window = bp.window_tokens
    fixed = [(i, s) for i, s in enumerate(bp.regions) if never_shrinks(s) and i in budgets]
    total = sum(budgets[i] for i, _ in fixed)
    if window > 0 and total > window:
        listing = ", ".join(
            f"{s.name} ({'reject ' if s.admission == 'reject' else ''}{s.kind}) {budgets[i]}"
            for i, s in fixed
        )
        report.error(
            ("regions",),
            f"the regions that never shrink need {total} tokens but the window holds {window} "
            f"(min(window.max_tokens, model.context_window) - model.max_output_tokens): "
            f"{listing}. Lower their budgets or raise the window",
        )
    if not any(_can_shrink(s) for s in bp.regions):
        report.warn(
            ("regions",),
            "no region can ever shrink (all are pinned, keyed, checklist, compact_history, "
            "reject, or custom without on_overflow); a full window will refuse every write",
        )


def _check_volatility(bp: Blueprint, report: _Report) -> None:
    if bp.layout.strategy == "regio":
        writer_warnings(bp.regions, bp.relief, report.warn)
    for index, spec in enumerate(bp.regions):
        if spec.volatility == "stable" and type(spec).written_every_turn:
            report.warn(
                ("regions", index, "volatility"),
                f"region {spec.name!r} is declared stable but {spec.kind} regions are written "
                "every turn; declare it grows or rewritten, or the layout will report it as "
                "an unstable declaration",
            )


def _check_seeds(bp: Blueprint, report: _Report) -> None:
    for index, spec in enumerate(bp.regions):
        base: tuple[str | int, ...] = ("regions", index)
        if spec.volatility in ("stable", "grows"):
            for sub, text in _seed_texts(spec):
                clocks = clock_variables(text)
                if clocks:
                    report.error(
                        (*base, *sub),
                        f"{spec.volatility} region {spec.name!r} has the clock variable "
                        f"{', '.join(clocks)} in its seed; a time value changes the cached prefix "
                        "on every turn. Move it to a region with volatility: rewritten "
                        "(laid out in the tail)",
                    )
        if spec.seed is None or isinstance(spec.seed, SeedFile):
            continue
        for j, entry in enumerate(spec.seed):
            _check_seed_entry(spec, entry, (*base, "seed", j), report)


def _check_seed_entry(
    spec: RegionSpec, entry: SeedEntry, path: tuple[str | int, ...], report: _Report
) -> None:
    if spec.kind == "keyed" and entry.key is None:
        report.error(path, "keyed region entries need a key: write {key: ..., text: ...}")
    if spec.kind != "keyed" and entry.key is not None:
        report.error(
            (*path, "key"),
            f"key applies only to keyed region seeds, not to a {spec.kind} region "
            "(checklist items are numbered by the region); remove it",
        )
    if entry.role is not None and not isinstance(spec, SlidingWindowSpec):
        report.error(
            (*path, "role"),
            f"role applies only to sliding_window seeds, not to a {spec.kind} region; remove it",
        )


def _check_misc(bp: Blueprint, budgets: dict[int, int], report: _Report) -> None:
    conversations = [i for i, s in enumerate(bp.regions) if isinstance(s, SlidingWindowSpec)]
    for index in conversations[1:]:
        report.warn(
            ("regions", index, "kind"),
            f"only the first sliding_window ({bp.regions[conversations[0]].name!r}) is the "
            "conversation; this one is laid out as a block of messages text",
        )
    for index, spec in enumerate(bp.regions):
        if isinstance(spec, CustomSpec) and not (spec.render or spec.on_write or spec.on_overflow):
            report.warn(
                ("regions", index, "kind"),
                f"custom region {spec.name!r} names no hooks (render, on_write, on_overflow); "
                "a built-in kind would do the same",
            )
        keep = getattr(spec, "keep_at_least", None)
        if keep is not None and index in budgets and keep >= bp.window_tokens:
            report.error(
                ("regions", index, "keep_at_least"),
                f"keep_at_least ({keep} tokens) is the whole window ({bp.window_tokens} tokens) "
                "or more: no compaction could ever free anything; lower it",
            )
        if (
            isinstance(spec, CompactingSpec)
            and spec.threshold_tokens is not None
            and index in budgets
            and spec.threshold_tokens > budgets[index]
        ):
            report.warn(
                ("regions", index, "threshold_tokens"),
                f"threshold_tokens ({spec.threshold_tokens}) is above the region's budget "
                f"({budgets[index]} tokens); the trigger can never fire before the region is full",
            )
