"""Region spec classes: the fields every region has, and each kind's own options (DESIGN §2)."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from regio.blueprint.capturespec import CaptureSpec
from regio.blueprint.fields import (
    _INT1,
    _OPT_INT0,
    _OPT_INT1,
    _SHARE,
    ADMISSIONS,
    EVICTION_STRATEGIES,
    HOOK_PATTERN,
    NAME_PATTERN,
    PERCENT_PATTERN,
    VOLATILITIES,
    _field,
)


@attrs.frozen(kw_only=True)
class SeedEntry:
    """One seeded entry. In YAML a plain string is shorthand for ``{text: ...}``."""

    text: str = _field("The entry's text.", schema={"type": "string"})
    key: str | None = _field(
        "Key of the entry (required in keyed regions; checklist items are numbered by the "
        "region and take no key).",
        schema={"type": ["string", "null"], "minLength": 1},
        default=None,
    )
    role: str | None = _field(
        "Message role for a `sliding_window` seed: `user` or `assistant`.",
        schema={"type": ["string", "null"], "enum": ["user", "assistant", None]},
        default=None,
    )


@attrs.frozen(kw_only=True)
class SeedFile:
    """Seed text read from a file, relative to the blueprint file's folder."""

    file: str = _field(
        "Path of a UTF-8 text file, relative to the blueprint file.",
        schema={"type": "string", "minLength": 1},
    )
    text: str | None = attrs.field(default=None, eq=False, repr=False)


SEED_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string"},
        {"type": "array", "items": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/SeedEntry"}]}},
        {"$ref": "#/$defs/SeedFile"},
        {"type": "null"},
    ]
}
BUDGET_SCHEMA: dict[str, Any] = {
    "anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": PERCENT_PATTERN}]
}
MARK_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "integer", "minimum": 1},
        {"type": "string", "pattern": PERCENT_PATTERN},
        {"type": "null"},
    ]
}


@attrs.frozen(kw_only=True)
class RegionSpec:
    """Fields shared by every region kind (DESIGN §2)."""

    kind: ClassVar[str] = ""
    #: The kind's one-line description, for docs and the schema.
    summary: ClassVar[str] = ""

    name: str = _field(
        "Unique region name (letters, digits, `_`, `-`).",
        schema={"type": "string", "pattern": NAME_PATTERN},
        describe="a name of letters, digits, '_' and '-', starting with a letter or '_'",
    )
    budget: int | str = _field(
        'Budget: tokens (`8000`) or a share of the window (`"12%"`).',
        schema=BUDGET_SCHEMA,
        describe='a number of tokens (integer >= 0) or a share of the window such as "12%"',
    )
    min_tokens: int | None = _field(
        "Floor on the resolved budget in tokens (the floor wins over `max_tokens`).",
        schema=_OPT_INT0,
        default=None,
    )
    max_tokens: int | None = _field(
        "Ceiling on the resolved budget in tokens.", schema=_OPT_INT0, default=None
    )
    admission: str = _field(
        "`evict` makes room by the kind's rules; `reject` refuses a write that does not fit "
        "and exempts the region from window reclaim.",
        schema={"type": "string", "enum": list(ADMISSIONS)},
        default="evict",
    )
    volatility: str = _field(
        "`stable` (set once), `grows` (append-only) or `rewritten` (changes in place). Decides "
        "the region's place in the layout.",
        schema={"type": "string", "enum": list(VOLATILITIES)},
        default="rewritten",
    )
    description: str = _field(
        "Shown as the region's heading in the prompt.", schema={"type": "string"}, default=""
    )
    seed: tuple[SeedEntry, ...] | SeedFile | None = _field(  # noqa: RUF009
        "Initial content: a string, a list of entries (strings or `{text, key, role}`), or "
        "`{file: path}`.",
        schema=SEED_SCHEMA,
        default=None,
        describe="a string, a list of strings / {text, key, role} entries, or {file: path}",
    )
    capture: tuple[CaptureSpec, ...] = _field(
        "Content the engine or a trace replay copies into this region: a list of rules "
        "(`system_prompt`, `footer`, `lookup`, `park`; see [Capture](#capture)). Omitted: "
        "nothing is captured; the region holds what the agent writes.",
        schema={"type": "array", "items": {"$ref": "#/$defs/Capture"}},
        factory=tuple,
        describe="a list of capture rules ([Capture](#capture))",
    )


@attrs.frozen(kw_only=True)
class PinnedSpec(RegionSpec):
    kind: ClassVar[str] = "pinned"
    summary: ClassVar[str] = (
        "Task, identity, instructions. Never rolls off or reclaimed; a write that does not fit "
        "fails."
    )


@attrs.frozen(kw_only=True)
class EvictionSpec:
    """How a `sliding_window` drops its oldest turn groups (DESIGN §2 eviction strategies)."""

    strategy: str = _field(
        "`per_item` (drop the oldest group while over), `bulk` (wait until `max_items + "
        "overflow`, then drop back to `max_items`) or `compact` (summarize the oldest "
        "`compact_count` items into the paired `compact_history`).",
        schema={"type": "string", "enum": list(EVICTION_STRATEGIES)},
        default="per_item",
    )
    overflow: int = _field(
        "`bulk`: items allowed above `max_items` before one bulk eviction.",
        schema=_INT1,
        default=10,
    )
    compact_count: int = _field(
        "`compact`: how many of the oldest items one compaction takes.",
        schema=_INT1,
        default=10,
    )
    trigger: int | str | None = _field(
        "`bulk` / `compact`: token high-water mark, tokens or a share of the region budget "
        '(`"90%"`). Passing it frees down to `target` in one step (one compaction, or one '
        "bulk eviction). Omitted: 90% of the budget for `compact`, the budget for `bulk`.",
        schema=MARK_SCHEMA,
        default=None,
    )
    target: int | str | None = _field(
        "`bulk` / `compact`: token low-water target of that step, tokens or a share of the "
        'region budget. Omitted: derived from the cache prices (docs/runtime.md, "Token '
        'hysteresis").',
        schema=MARK_SCHEMA,
        default=None,
    )


@attrs.frozen(kw_only=True)
class SlidingWindowSpec(RegionSpec):
    kind: ClassVar[str] = "sliding_window"
    summary: ClassVar[str] = "The conversation as typed messages; evicts whole turn groups."

    max_items: int | None = _field(
        "Most messages kept (turn groups are never split). Omitted: limited by tokens only.",
        schema=_OPT_INT1,
        default=None,
    )
    max_turns: int | None = _field(
        "Keep the last N turns of earlier history (a turn starts at a user message); the "
        "current turn is always kept whole. Omitted: no turn limit.",
        schema=_OPT_INT0,
        default=None,
    )
    max_tool_calls: int | None = _field(
        "Keep at most K tool calls of earlier history; the oldest go first, each with its "
        "results. Omitted: no limit.",
        schema=_OPT_INT0,
        default=None,
    )
    eviction: EvictionSpec = _field(  # noqa: RUF009
        "Eviction strategy and its options.", nested=EvictionSpec, factory=EvictionSpec
    )


@attrs.frozen(kw_only=True)
class CompactingSpec(RegionSpec):
    kind: ClassVar[str] = "compacting"
    summary: ClassVar[str] = (
        "Working notes; past the trigger the whole content is summarized into the paired "
        "`compact_history`, then cleared."
    )

    compact_at: float = _field(
        "Trigger: share of the budget at which the region queues a compaction.",
        schema=_SHARE,
        default=0.8,
    )
    threshold_tokens: int | None = _field(
        "Trigger in tokens; with `compact_at`, whichever is reached first fires.",
        schema=_OPT_INT1,
        default=None,
    )
    target: float = _field(
        "Low-water mark: share of the budget a compaction brings the region down to "
        "(hysteresis; below `compact_at`); read by the runtime's compaction flush.",
        schema=_SHARE,
        default=0.5,
    )


@attrs.frozen(kw_only=True)
class CompactHistorySpec(RegionSpec):
    kind: ClassVar[str] = "compact_history"
    summary: ClassVar[str] = (
        "Append-only summaries from its `source`; over budget, its oldest summaries are merged."
    )

    source: str = _field(
        "Name of the region whose summaries it receives (a `compacting` region or a "
        "`sliding_window` with `compact` eviction).",
        schema={"type": "string", "pattern": NAME_PATTERN},
    )


@attrs.frozen(kw_only=True)
class KeyedSpec(RegionSpec):
    kind: ClassVar[str] = "keyed"
    summary: ClassVar[str] = (
        "Facts by key (alias `hashmap`); a write with an existing key replaces it in place."
    )

    max_entries: int | None = _field(
        "Most keys kept; past it the least recently updated key is dropped.",
        schema=_OPT_INT1,
        default=None,
    )


@attrs.frozen(kw_only=True)
class TemporarySpec(RegionSpec):
    kind: ClassVar[str] = "temporary"
    summary: ClassVar[str] = (
        "Raw tool output and lookups; reclaimed oldest-first. The default kind."
    )


@attrs.frozen(kw_only=True)
class ClearableSpec(RegionSpec):
    kind: ClassVar[str] = "clearable"
    summary: ClassVar[str] = "Scratch space; wiped whole first when the window is full."


@attrs.frozen(kw_only=True)
class ChecklistSpec(RegionSpec):
    kind: ClassVar[str] = "checklist"
    summary: ClassVar[str] = "Todo items (open/done, notes) managed by the todo_* tools."

    gate: bool = _field(
        "When true, the agent may not finish while items are open.",
        schema={"type": "boolean"},
        default=False,
    )


@attrs.frozen(kw_only=True)
class CustomSpec(RegionSpec):
    kind: ClassVar[str] = "custom"
    summary: ClassVar[str] = (
        "Author-defined behaviour through Python hooks, loaded only when custom hooks are allowed."
    )

    render: str | None = _field(
        "Hook `module:function(region) -> str` that renders the region's text.",
        schema={"type": ["string", "null"], "pattern": HOOK_PATTERN},
        default=None,
        describe="a hook reference 'module:function'",
    )
    on_write: str | None = _field(
        "Hook `module:function(region, entry) -> Entry | None` run before each write; it may "
        "transform the entry, or refuse it by returning None.",
        schema={"type": ["string", "null"], "pattern": HOOK_PATTERN},
        default=None,
        describe="a hook reference 'module:function'",
    )
    on_overflow: str | None = _field(
        "Hook `module:function(region, tokens_to_free) -> list of entry ids` to drop, used by "
        "window reclaim phase 1.5.",
        schema={"type": ["string", "null"], "pattern": HOOK_PATTERN},
        default=None,
        describe="a hook reference 'module:function'",
    )


#: Spec class per kind, in the order of :data:`KINDS`.
REGION_CLASSES: dict[str, type[RegionSpec]] = {
    cls.kind: cls
    for cls in (
        PinnedSpec,
        SlidingWindowSpec,
        CompactingSpec,
        CompactHistorySpec,
        KeyedSpec,
        TemporarySpec,
        ClearableSpec,
        ChecklistSpec,
        CustomSpec,
    )
}
