"""The ``relief`` section of a blueprint: the relief chain run under token pressure before any
summarization (clear old tool results, trim oversized text blocks, then summarize) and the
per-tool rules applied when a tool result is admitted (``route``, ``max_result_tokens``,
``dedupe``). The runtime side is :mod:`regio.runtime.relief`; docs/relief.md explains the chain.

Sizes: ``*_chars`` are characters, every other size is tokens. Every default is the one of
:class:`regio.policies.relief.ReliefPolicy` / :class:`~regio.policies.relief.ToolRelief` (the
single source: the fields below read them), so a blueprint and ``EngineOptions.relief`` built
in Python agree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated

import attrs

from regio.blueprint.capturespec import key_fields
from regio.blueprint.fields import FieldRule, Int0, Int1, NonEmpty, _field
from regio.policies.relief import MARKER_TOKENS, ReliefPolicy, ToolRelief

__all__ = ["ReliefSpec", "ReliefToolSpec", "check_relief", "relief_policy"]

#: Region kinds a tool's results can be routed to (they may drop what they hold).
ROUTE_KINDS = ("temporary", "clearable", "keyed")

_POLICY = ReliefPolicy()  # the defaults
_TOOL = ToolRelief()
#: ``max_result_tokens``: at least the trim marker's size (a trimmed result keeps the marker).
ResultTokens = Annotated[int, FieldRule(ge=MARKER_TOKENS)]


@attrs.frozen(kw_only=True)
class ReliefToolSpec:
    """The relief rules of one tool (an item of `relief.tools`)."""

    name: NonEmpty = _field("The tool's name, as the agent calls it.")
    clear: bool = _field(
        "`false`: the tool's results are never cleared or trimmed (e.g. a tool whose "
        "results the agent keeps referring to).",
        default=_TOOL.clear,
    )
    keep_last: Int0 | None = _field(
        "The tool's newest N results are never cleared (on top of `relief.keep_last`). "
        "Omitted: only `relief.keep_last`.",
        default=_TOOL.keep_last,
    )
    max_result_tokens: ResultTokens | None = _field(
        "A longer result is trimmed when it is admitted: head and tail kept around a marker "
        "saying how many characters were cut; `context_restore` brings the full text back. "
        f"At least {MARKER_TOKENS} (the marker's size). Omitted: no limit.",
        default=_TOOL.max_result_tokens,
    )
    dedupe: bool = _field(
        "A newer call with the same tool and arguments supersedes the older result: under "
        "token pressure, the chain's first stage makes every such older result a placeholder "
        "naming the newer call (see `dedupe_at_least`).",
        default=_TOOL.dedupe,
    )
    route: NonEmpty | None = _field(
        "Region (temporary, clearable or keyed) the tool's results are written to instead of "
        "the conversation, which keeps a short pointer. Omitted: results stay in the "
        "conversation.",
        default=_TOOL.route,
    )
    route_key: NonEmpty | None = _field(
        '`route` into a keyed region: key template of the call\'s arguments, e.g. "file:{path}" '
        "(`{tool}` is the tool's name). Required for a keyed region, not allowed otherwise.",
        default=_TOOL.route_key,
    )


@attrs.frozen(kw_only=True)
class ReliefSpec:
    """Relief before summarization: cheapest moves first under token pressure (supersede
    duplicate tool results, clear old ones, then trim oversized text blocks, then summarize),
    each stage in one batch down to the compaction target or not at all, and per-tool rules
    on admission."""

    enabled: bool = _field(
        "Run the relief chain. Omitted: off (token pressure goes straight to summarization).",
        default=False,
    )
    dedupe_at_least: Int0 = _field(
        "Tokens the dedupe stage (stage 0, for tools with `dedupe`) must free, or it does not "
        "run; when it runs it supersedes every duplicate at once, never one whose placeholder "
        "is not smaller.",
        default=_POLICY.dedupe_at_least,
    )
    clear: bool = _field("Stage 1: clear old tool results (placeholders).", default=_POLICY.clear)
    keep_last: Int0 = _field(
        "Newest tool results never cleared (Anthropic's context editing keeps 3).",
        default=_POLICY.keep_last,
    )
    clear_at_least: Int0 = _field(
        "Tokens stage 1 must free, or it does not run (each clearing rewrites the cached "
        "prefix from the first cleared result on).",
        default=_POLICY.clear_at_least,
    )
    trim: bool = _field("Stage 2: trim oversized text blocks (head + tail).", default=_POLICY.trim)
    trim_over_chars: Int1 = _field(
        "Stage 2 trims tool results and assistant text longer than this (characters); user "
        "text is never trimmed.",
        default=_POLICY.trim_over_chars,
    )
    trim_head_chars: Int0 = _field(
        "Characters kept at the start of a trimmed block.", default=_POLICY.trim_head_chars
    )
    trim_tail_chars: Int0 = _field(
        "Characters kept at the end of a trimmed block.", default=_POLICY.trim_tail_chars
    )
    trim_at_least: Int0 = _field(
        "Tokens stage 2 must free, or it does not run.", default=_POLICY.trim_at_least
    )
    restore_tool: bool = _field(
        "Offer `context_restore` (call id -> the full result, appended at the end of the "
        "conversation) whatever `tools.context` says; placeholders name it.",
        default=_POLICY.restore_tool,
    )
    clear_after_summary: bool = _field(
        "When clearing and trimming cannot reach the target and the conversation is "
        "summarized, also clear and trim what the summary kept, in the same cache rewrite: "
        "cheaper (longer between compactions); with salient placeholders "
        "(`placeholder_extract_tokens`) the facts stay (docs/relief.md has the figures). "
        "`false`: the tool results the summary kept stay verbatim.",
        default=_POLICY.clear_after_summary,
    )
    placeholder_extract_tokens: Int0 = _field(
        "A cleared result's placeholder also carries up to this many tokens of the result's "
        "salient items (error lines, file paths, ids, numbers), so its facts stay in the "
        "context; the extract depends only on the result, so the placeholder never changes. "
        "0: the placeholder names the call only.",
        default=_POLICY.placeholder_extract_tokens,
    )
    tools: tuple[ReliefToolSpec, ...] = _field(
        "Per-tool rules (see [ReliefTool](#relieftool)). Omitted: none.", factory=tuple
    )


def relief_policy(spec: ReliefSpec) -> ReliefPolicy | None:
    """The :class:`regio.policies.relief.ReliefPolicy` of ``spec`` (``None`` when off): every
    policy field from the spec's key of the same name."""
    if not spec.enabled:
        return None
    tools = {
        t.name: ToolRelief(**{f: getattr(t, f) for f in ToolRelief.__struct_fields__})
        for t in spec.tools
    }
    fields = [f for f in ReliefPolicy.__struct_fields__ if f != "tools"]
    return ReliefPolicy(**{f: getattr(spec, f) for f in fields}, tools=tools)


Report = Callable[[tuple["str | int", ...], str], None]


def check_relief(spec: ReliefSpec, regions: Sequence[object], error: Report) -> None:
    """Check ``spec`` against the blueprint's ``regions``, calling ``error(path, message)``:
    a trim whose head and tail do not fit 200 characters under its threshold, a tool named
    twice, a ``route`` to a missing region or a kind that cannot drop content, a
    ``route_key`` missing for a keyed region, given for another kind, or malformed."""
    if spec.trim_head_chars + spec.trim_tail_chars + 200 > spec.trim_over_chars:
        error(
            ("relief", "trim_over_chars"),
            f"trim_over_chars ({spec.trim_over_chars}) must exceed trim_head_chars + "
            f"trim_tail_chars ({spec.trim_head_chars} + {spec.trim_tail_chars}) by at least "
            "200 characters, or a trimmed block would be trimmed again",
        )
    kinds = {getattr(r, "name", ""): getattr(r, "kind", "") for r in regions}
    seen: set[str] = set()
    for i, tool in enumerate(spec.tools):
        path: tuple[str | int, ...] = ("relief", "tools", i)
        if tool.name in seen:
            error((*path, "name"), f"tool {tool.name!r} has rules already; merge them")
        seen.add(tool.name)
        if tool.route is None:
            if tool.route_key is not None:
                error((*path, "route_key"), "route_key applies only with route: remove it")
            continue
        kind = kinds.get(tool.route)
        if kind is None:
            error((*path, "route"), f"no region {tool.route!r}; regions: {', '.join(kinds)}")
        elif kind not in ROUTE_KINDS:
            error(
                (*path, "route"),
                f"region {tool.route!r} is {kind}; route tool results to a "
                f"{', '.join(ROUTE_KINDS)} region",
            )
        elif kind == "keyed" and tool.route_key is None:
            error(path, f'region {tool.route!r} is keyed: give route_key (e.g. "file:{{path}}")')
        elif kind != "keyed" and tool.route_key is not None:
            error((*path, "route_key"), f"region {tool.route!r} is {kind}, not keyed: remove it")
        if tool.route_key is not None:
            try:
                key_fields(tool.route_key)
            except ValueError as exc:
                error((*path, "route_key"), f"bad key template {tool.route_key!r}: {exc}")
