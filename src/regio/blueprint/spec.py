"""Blueprint spec classes: the typed, immutable form of a blueprint YAML file.

The top-level sections live here; the region classes in :mod:`regio.blueprint.regionspec` and
the vocabulary and field helper in :mod:`regio.blueprint.fields` (all re-exported here).
Every field's type states what it accepts (``fields`` explains the vocabulary) and its attrs
metadata its documentation, so the loader (cattrs, :mod:`regio.blueprint.convert`), the JSON
Schema (:mod:`regio.blueprint.schema`) and the key reference (``docs/blueprint.md``) all come
from these classes and cannot drift apart.

Units: token counts are integers (tokens); shares and fractions are floats in (0, 1]; budgets
are tokens or a percentage string of the window (``"12%"``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import attrs

from regio.blueprint.capturespec import CaptureSpec
from regio.blueprint.contextspec import ClearThinkingSpec, ClearToolUsesSpec, ContextManagementSpec
from regio.blueprint.errors import UnknownRegionError, suggest
from regio.blueprint.fields import (
    ADMISSIONS,
    CLOCK_WORDS,
    EVICTION_STRATEGIES,
    LAYOUT_STRATEGIES,
    PROFILE_PATTERN,
    TOKENIZERS,
    TTLS,
    VOLATILITIES,
    FieldRule,
    Int0,
    Int1,
    LayoutStrategy,
    Mark,
    NonEmpty,
    Share,
    Tokenizer,
    Ttl,
    _field,
    yaml_fields,
)
from regio.blueprint.regionspec import (
    KIND_ALIASES,
    KINDS,
    REGION_CLASSES,
    ChecklistSpec,
    ClearableSpec,
    CompactHistorySpec,
    CompactingSpec,
    CustomSpec,
    EvictionSpec,
    KeyedSpec,
    PinnedSpec,
    RegionSpec,
    SeedEntry,
    SeedFile,
    SlidingWindowSpec,
    TemporarySpec,
)
from regio.blueprint.reliefspec import ReliefSpec, ReliefToolSpec
from regio.layout.chunks import DEFAULT_CHUNK_TOKENS
from regio.layout.settle import DEFAULT_SETTLE_SHARE

__all__ = [
    "ADMISSIONS",
    "CLOCK_WORDS",
    "EVICTION_STRATEGIES",
    "KINDS",
    "KIND_ALIASES",
    "LAYOUT_STRATEGIES",
    "REGION_CLASSES",
    "SPEC_CLASSES",
    "TOKENIZERS",
    "TTLS",
    "VOLATILITIES",
    "Blueprint",
    "CacheSpec",
    "ChecklistSpec",
    "ClearThinkingSpec",
    "ClearToolUsesSpec",
    "ClearableSpec",
    "CompactHistorySpec",
    "CompactingSpec",
    "ContextManagementSpec",
    "CustomSpec",
    "EvictionSpec",
    "KeyedSpec",
    "LayoutSpec",
    "ModelSpec",
    "PinnedSpec",
    "RegionSpec",
    "ReliefSpec",
    "ReliefToolSpec",
    "SeedEntry",
    "SeedFile",
    "SlidingWindowSpec",
    "SummarizerSpec",
    "TemporarySpec",
    "ToolsSpec",
    "WindowSpec",
    "yaml_fields",
]


Provider = Annotated[
    str,
    FieldRule(
        pattern=r"^[a-z][a-z0-9_]*$",
        describe="a lower-case provider name such as 'anthropic' or 'openai'",
    ),
]
Profile = Annotated[
    str,
    FieldRule(
        pattern=PROFILE_PATTERN,
        describe="a 'provider:model' string such as 'anthropic:claude-sonnet-4-6'",
    ),
]
Version = Annotated[Literal[1], FieldRule(describe="version 1 (the one format this regio reads)")]
Regions = Annotated[
    tuple[RegionSpec, ...],
    FieldRule(
        min_items=1,
        describe="a non-empty list of regions, each a mapping with at least name, kind and budget",
    ),
]


@attrs.frozen(kw_only=True)
class ModelSpec:
    """The model the agent talks to."""

    provider: Provider = _field(
        "Provider name: `anthropic`, `openai`, `google`, `deepseek`, `openai_compatible`, "
        "`llamacpp`, ... (used to pick the renderer and defaults)."
    )
    name: NonEmpty = _field("The provider's model name, e.g. `claude-sonnet-4-6` or `gpt-5`.")
    context_window: Int1 = _field("The model's context window in tokens (input + output).")
    max_output_tokens: Int0 = _field(
        "Tokens reserved for the model's answer; subtracted from the window.", default=4096
    )


@attrs.frozen(kw_only=True)
class WindowSpec:
    """The window budget and its reclaim mark (window reclaim)."""

    max_tokens: Int1 | None = _field(
        "Total prompt budget in tokens. Omitted: the model's context window. Budgets resolve "
        "against min(max_tokens, context_window) - max_output_tokens.",
        default=None,
    )
    high_water: Share = _field(
        "Share of the window at which window reclaim starts (phase 1 clearable, 2 temporary, "
        "3 compacting).",
        default=0.9,
    )
    compact_trigger: Mark | None = _field(
        "Whole-context compaction trigger: every compactable region is compacted (toward half "
        "of it) when the next request's calibrated size reaches it; tokens, or a share of the "
        'window such as `"80%"`. A trigger at or below what never shrinks (the pinned '
        "seeds and the context tools' schemas) is reported when the blueprint loads and "
        "ignored at run time. Omitted: none (each region's own trigger).",
        default=None,
    )


@attrs.frozen(kw_only=True)
class CacheSpec:
    """The provider prefix-cache profile used by the layout and the cache simulator."""

    profile: Profile | None = _field(
        "Key into regio's cache rules data, `provider:model` (e.g. "
        "`anthropic:claude-sonnet-4-6`). Omitted: `<model.provider>:<model.name>`.",
        default=None,
    )
    ttl: Ttl = _field(
        "Cache entry lifetime requested at breakpoints (Anthropic `ttl`): `5m` or `1h`.",
        default="5m",
    )


@attrs.frozen(kw_only=True)
class LayoutSpec:
    """How the window is laid out into a request (`layout.md`)."""

    strategy: LayoutStrategy = _field(
        "Layout strategy: `naive`, `kind`, `volatility` (the baselines) or `regio`.",
        default="regio",
    )
    chunk_tokens: Int1 = _field(
        "Size in tokens of the frozen chunks that `grows` regions are packed into.",
        default=DEFAULT_CHUNK_TOKENS,
    )
    settle_share: Share = _field(
        "Share of the window that unsettled notes of `grows` regions may reach in the "
        "conversation before they are settled into their region.",
        default=DEFAULT_SETTLE_SHARE,
    )


@attrs.frozen(kw_only=True)
class SummarizerSpec:
    """The model that writes compaction summaries (the compaction flush)."""

    provider: Literal["extractive", "anthropic", "openai"] = _field(
        "`extractive` (offline, no model: the default), `anthropic` or `openai` (an LLM "
        "summarizer through the provider adapters; with the agent's own model it forks the "
        "agent's last request so the summary reads the provider cache).",
        default="extractive",
    )
    base_url: NonEmpty | None = _field(
        "`openai`: base URL of an OpenAI-compatible server (a local llama.cpp server, ...). "
        "Omitted: the provider's own endpoint.",
        default=None,
    )
    model: NonEmpty | None = _field(
        "Summarizer model name. Omitted: the agent's own model.", default=None
    )
    max_summary_tokens: Int1 = _field("Upper bound on one summary, in tokens.", default=2000)
    context_window: Int1 | None = _field(
        "The summarizer model's context window in tokens; longer compaction requests are "
        "chunked. Omitted: the agent model's window.",
        default=None,
    )
    instructions: str = _field(
        "Extra standing instructions added to the built-in summary requirements (they never "
        "replace them).",
        default="",
    )
    carry_forward: Literal["append", "replace"] = _field(
        "What a compaction does with the summaries before it. `append`: each compaction "
        "adds a summary of what it cut and the earlier ones stay byte-identical until the "
        "history passes its budget and its oldest are merged (a summarizer call of its own). "
        "`replace`: one rolling summary per source region; each compaction's summarizer reads the "
        "previous summary with what it cuts and writes one that replaces it (no merge "
        "calls, a history of at most `max_summary_tokens` plus the durable items; older "
        'detail is compressed again at every compaction). docs/runtime.md, "Compaction '
        'flush", has the trade-off and docs/benchmark.md the figures.',
        default="append",
    )
    refusal_phrases: tuple[NonEmpty, ...] = _field(
        "Openings that make a summary a refusal (refused, nothing changes), besides the "
        "built-in English ones (`I can't`, `I'm sorry`, `As an AI`, ...): a deployment in "
        "another language adds its own (`[Lo siento, No puedo]`). Compared case-insensitively "
        "with the summary's start.",
        factory=tuple,
    )


@attrs.frozen(kw_only=True)
class ToolsSpec:
    """Which of regio's own tools the agent is offered (their schemas ride on every request)."""

    context: Literal["auto", "all", "none"] = _field(
        "Context tools (`context_write`, `context_read`, `todo_add`, `compact`, ...): `auto` "
        "offers them when some region is agent-writable and none otherwise, `all` always, "
        "`none` never (an agent that never calls them does not pay for their schemas on "
        "every request).",
        default="auto",
    )


@attrs.frozen(kw_only=True)
class Blueprint:
    """A whole window declaration (``version: 1``).

    ``warnings`` (load-time :class:`~regio.blueprint.errors.BlueprintWarning` objects) and
    ``source`` (file name and line map) are attached by the loader and take no part in
    equality or in :func:`~regio.blueprint.dump_blueprint`.
    """

    version: Version = _field("Format version; must be `1`.")
    name: NonEmpty = _field("Name of the agent / blueprint.")
    description: str = _field("Free text about the blueprint.", default="")
    model: ModelSpec = _field("The model the agent talks to.")
    window: WindowSpec = _field("Window budget.", factory=WindowSpec)
    tokenizer: Tokenizer = _field(
        "Token counter: `o200k_base`, `cl100k_base` (tiktoken, offline) or `heuristic` "
        "(a calibrated estimate).",
        default="o200k_base",
    )
    cache: CacheSpec = _field("Prefix-cache profile.", factory=CacheSpec)
    layout: LayoutSpec = _field("Layout strategy.", factory=LayoutSpec)
    summarizer: SummarizerSpec = _field("Compaction summarizer.", factory=SummarizerSpec)
    tools: ToolsSpec = _field("regio's own tools offered to the agent.", factory=ToolsSpec)
    relief: ReliefSpec = _field(
        "Relief before summarization (clear, trim, per-tool rules).", factory=ReliefSpec
    )
    context_management: ContextManagementSpec | None = _field(
        "Anthropic server-side context editing sent with every request (Anthropic only). "
        "Omitted: none.",
        default=None,
    )
    regions: Regions = _field("The regions, in declaration order (an ordered list).")
    warnings: tuple[Any, ...] = attrs.field(default=(), eq=False, repr=False)
    source: Any = attrs.field(default=None, eq=False, repr=False)

    @property
    def window_tokens(self) -> int:
        """Tokens the regions share: min(window.max_tokens, context_window) - max_output_tokens
        (budget truth; tool schemas are subtracted later, by the runtime)."""
        limit = self.model.context_window
        if self.window.max_tokens is not None:
            limit = min(limit, self.window.max_tokens)
        return limit - self.model.max_output_tokens

    @property
    def cache_profile(self) -> str:
        """``cache.profile``, or ``<provider>:<model name>`` when omitted."""
        return self.cache.profile or f"{self.model.provider}:{self.model.name}"

    @property
    def summary_model(self) -> tuple[str, str] | None:
        """``(provider, model)`` of the summarizer when ``summarizer.model`` names another
        model than the agent's ``model.name``: on ``summarizer.provider``, or the agent's
        provider when that is ``extractive`` (the offline default, which the bench and the
        cost estimates of ``regio validate`` price as an LLM on the model it names);
        ``None`` when it names none or the agent's own."""
        spec = self.summarizer
        if not spec.model or spec.model == self.model.name:
            return None
        provider = self.model.provider if spec.provider == "extractive" else spec.provider
        return provider, spec.model

    def region(self, name: str) -> RegionSpec:
        """The region spec called ``name``; raises :class:`UnknownRegionError` (a
        ``RegioError`` and ``KeyError``) naming the known regions."""
        for spec in self.regions:
            if spec.name == name:
                return spec
        names = [r.name for r in self.regions]
        raise UnknownRegionError(
            f"no region {name!r} in blueprint {self.name!r}.{suggest(name, names)} "
            f"Regions: {', '.join(names)}"
        )


#: Every spec class; their string annotations are resolved here (``Annotated`` rules kept),
#: so the converter and the schema read real types.
SPEC_CLASSES: tuple[type, ...] = (
    Blueprint,
    CacheSpec,
    CaptureSpec,
    ClearThinkingSpec,
    ClearToolUsesSpec,
    ContextManagementSpec,
    EvictionSpec,
    LayoutSpec,
    ModelSpec,
    RegionSpec,
    SeedEntry,
    SeedFile,
    SummarizerSpec,
    ToolsSpec,
    ReliefSpec,
    ReliefToolSpec,
    WindowSpec,
    *REGION_CLASSES.values(),
)
for _cls in SPEC_CLASSES:
    attrs.resolve_types(_cls, include_extras=True)
