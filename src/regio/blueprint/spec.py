"""Blueprint spec classes: the typed, immutable form of a blueprint YAML file.

The top-level sections live here; the region classes in :mod:`regio.blueprint.regionspec` and
the vocabulary and field helper in :mod:`regio.blueprint.fields` (all re-exported here).
Every field carries its documentation and the JSON Schema of its value in attrs metadata, so the
structural checks (:mod:`regio.blueprint.check`), the JSON Schema export
(:mod:`regio.blueprint.schema`) and the key reference (``docs/blueprint.md``) all come from these
classes and cannot drift apart. Section names and region semantics follow DESIGN.md §2-§4.

Units: token counts are integers (tokens); shares and fractions are floats in (0, 1]; budgets
are tokens or a percentage string of the window (``"12%"``).
"""

from __future__ import annotations

from typing import Any

import attrs

from regio.blueprint.fields import (
    _INT0,
    _INT1,
    _OPT_INT1,
    _SHARE,
    ADMISSIONS,
    CLOCK_WORDS,
    EVICTION_STRATEGIES,
    KIND_ALIASES,
    KINDS,
    LAYOUT_STRATEGIES,
    NEVER_SHRINKING_KINDS,
    PER_TURN_KINDS,
    PROFILE_PATTERN,
    TOKENIZERS,
    TTLS,
    VOLATILITIES,
    _field,
    yaml_fields,
)
from regio.blueprint.regionspec import (
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

__all__ = [
    "ADMISSIONS",
    "CLOCK_WORDS",
    "EVICTION_STRATEGIES",
    "KINDS",
    "KIND_ALIASES",
    "LAYOUT_STRATEGIES",
    "NEVER_SHRINKING_KINDS",
    "PER_TURN_KINDS",
    "REGION_CLASSES",
    "TOKENIZERS",
    "TTLS",
    "VOLATILITIES",
    "Blueprint",
    "CacheSpec",
    "ChecklistSpec",
    "ClearableSpec",
    "CompactHistorySpec",
    "CompactingSpec",
    "CustomSpec",
    "EvictionSpec",
    "KeyedSpec",
    "LayoutSpec",
    "ModelSpec",
    "PinnedSpec",
    "RegionSpec",
    "SeedEntry",
    "SeedFile",
    "SlidingWindowSpec",
    "SummarizerSpec",
    "TemporarySpec",
    "WindowSpec",
    "yaml_fields",
]


@attrs.frozen(kw_only=True)
class ModelSpec:
    """The model the agent talks to."""

    provider: str = _field(
        "Provider name: `anthropic`, `openai`, `google`, `deepseek`, `openai_compatible`, "
        "`llamacpp`, ... (used to pick the renderer and defaults).",
        schema={"type": "string", "pattern": r"^[a-z][a-z0-9_]*$"},
        describe="a lower-case provider name such as 'anthropic' or 'openai'",
    )
    name: str = _field(
        "The provider's model name, e.g. `claude-sonnet-4-5` or `gpt-4o`.",
        schema={"type": "string", "minLength": 1},
    )
    context_window: int = _field(
        "The model's context window in tokens (input + output).", schema=_INT1
    )
    max_output_tokens: int = _field(
        "Tokens reserved for the model's answer; subtracted from the window.",
        schema=_INT0,
        default=4096,
    )


@attrs.frozen(kw_only=True)
class WindowSpec:
    """The window budget and its reclaim mark (DESIGN §2 window reclaim)."""

    max_tokens: int | None = _field(
        "Total prompt budget in tokens. Omitted: the model's context window. Budgets resolve "
        "against min(max_tokens, context_window) - max_output_tokens.",
        schema=_OPT_INT1,
        default=None,
    )
    high_water: float = _field(
        "Share of the window at which window reclaim starts (phase 1 clearable, 2 temporary, "
        "3 compacting).",
        schema=_SHARE,
        default=0.9,
    )


@attrs.frozen(kw_only=True)
class CacheSpec:
    """The provider prefix-cache profile used by the layout and the cache simulator."""

    profile: str | None = _field(
        "Key into regio's cache rules data, `provider:model` (e.g. "
        "`anthropic:claude-sonnet-4-5`). Omitted: `<model.provider>:<model.name>`.",
        schema={"type": ["string", "null"], "pattern": PROFILE_PATTERN},
        default=None,
        describe="a 'provider:model' string such as 'anthropic:claude-sonnet-4-5'",
    )
    ttl: str = _field(
        "Cache entry lifetime requested at breakpoints (Anthropic `ttl`): `5m` or `1h`.",
        schema={"type": "string", "enum": list(TTLS)},
        default="5m",
    )


@attrs.frozen(kw_only=True)
class LayoutSpec:
    """How the window is laid out into a request (DESIGN §3)."""

    strategy: str = _field(
        "Layout strategy: `naive`, `kind`, `volatility` (the baselines) or `regio`.",
        schema={"type": "string", "enum": list(LAYOUT_STRATEGIES)},
        default="regio",
    )
    chunk_tokens: int = _field(
        "Size in tokens of the frozen chunks that `grows` regions are packed into.",
        schema=_INT1,
        default=1024,
    )
    settle_share: float = _field(
        "Share of the window that unsettled notes of `grows` regions may reach in the "
        "conversation before they are settled into their region.",
        schema=_SHARE,
        default=0.1,
    )


@attrs.frozen(kw_only=True)
class SummarizerSpec:
    """The model that writes compaction summaries (DESIGN §4 compaction flush)."""

    provider: str = _field(
        "`extractive` (offline, no model: the default), `anthropic` or `openai` (an LLM "
        "summarizer through the provider adapters; with the agent's own model it forks the "
        "agent's last request so the summary reads the provider cache).",
        schema={"type": "string", "enum": ["extractive", "anthropic", "openai"]},
        default="extractive",
    )
    base_url: str | None = _field(
        "`openai`: base URL of an OpenAI-compatible server (a local llama.cpp server, ...). "
        "Omitted: the provider's own endpoint.",
        schema={"type": ["string", "null"], "minLength": 1},
        default=None,
    )
    model: str | None = _field(
        "Summarizer model name. Omitted: the agent's own model.",
        schema={"type": ["string", "null"], "minLength": 1},
        default=None,
    )
    max_summary_tokens: int = _field(
        "Upper bound on one summary, in tokens.", schema=_INT1, default=2000
    )
    context_window: int | None = _field(
        "The summarizer model's context window in tokens; longer compaction requests are "
        "chunked. Omitted: the agent model's window.",
        schema=_OPT_INT1,
        default=None,
    )
    instructions: str = _field(
        "Extra standing instructions added to the built-in summary requirements (they never "
        "replace them).",
        schema={"type": "string"},
        default="",
    )


@attrs.frozen(kw_only=True)
class Blueprint:
    """A whole window declaration (``version: 1``).

    ``warnings`` (load-time :class:`~regio.blueprint.errors.BlueprintWarning` objects) and
    ``source`` (file name and line map) are attached by the loader and take no part in
    equality or in :func:`~regio.blueprint.dump_blueprint`.
    """

    version: int = _field("Format version; must be `1`.", schema={"type": "integer", "enum": [1]})
    name: str = _field("Name of the agent / blueprint.", schema={"type": "string", "minLength": 1})
    description: str = _field(
        "Free text about the blueprint.", schema={"type": "string"}, default=""
    )
    model: ModelSpec = _field("The model the agent talks to.", nested=ModelSpec)  # noqa: RUF009
    window: WindowSpec = _field("Window budget.", nested=WindowSpec, factory=WindowSpec)  # noqa: RUF009
    tokenizer: str = _field(
        "Token counter: `o200k_base`, `cl100k_base` (tiktoken, offline) or `heuristic` "
        "(a calibrated estimate).",
        schema={"type": "string", "enum": list(TOKENIZERS)},
        default="o200k_base",
    )
    cache: CacheSpec = _field("Prefix-cache profile.", nested=CacheSpec, factory=CacheSpec)  # noqa: RUF009
    layout: LayoutSpec = _field("Layout strategy.", nested=LayoutSpec, factory=LayoutSpec)  # noqa: RUF009
    summarizer: SummarizerSpec = _field(  # noqa: RUF009
        "Compaction summarizer.", nested=SummarizerSpec, factory=SummarizerSpec
    )
    regions: tuple[RegionSpec, ...] = _field(
        "The regions, in declaration order (an ordered list).",
        schema={"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/Region"}},
    )
    warnings: tuple[Any, ...] = attrs.field(default=(), eq=False, repr=False)
    source: Any = attrs.field(default=None, eq=False, repr=False)

    @property
    def window_tokens(self) -> int:
        """Tokens the regions share: min(window.max_tokens, context_window) - max_output_tokens
        (DESIGN §4 budget truth; tool schemas are subtracted later, by the runtime)."""
        limit = self.model.context_window
        if self.window.max_tokens is not None:
            limit = min(limit, self.window.max_tokens)
        return limit - self.model.max_output_tokens

    @property
    def cache_profile(self) -> str:
        """``cache.profile``, or ``<provider>:<model name>`` when omitted."""
        return self.cache.profile or f"{self.model.provider}:{self.model.name}"

    def region(self, name: str) -> RegionSpec:
        """The region spec called ``name``; KeyError naming the known regions."""
        for spec in self.regions:
            if spec.name == name:
                return spec
        known = ", ".join(r.name for r in self.regions)
        raise KeyError(f"no region {name!r} in blueprint {self.name!r} (regions: {known})")
