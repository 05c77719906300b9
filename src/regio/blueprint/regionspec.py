"""Region spec classes: the fields every region has, and each kind's own options.

Each kind is one class: it declares its ``kind`` word (and ``aliases``), a one-line
``summary``, whether window reclaim ever shrinks it (``never_shrinks``) and whether it is
written every turn (``written_every_turn``), its own YAML keys as typed attrs fields, and
:meth:`RegionSpec.region_options` (the :func:`regio.regions.make_region` options) and
:meth:`RegionSpec.policy` (its summary line in ``regio validate``). :func:`region_kind`
registers it; the loader (which looks the class of a region's ``kind`` up when it reads the
region), the JSON Schema and the docs read the registry, so a new kind is one class here, or
in the user's own module next to its :class:`regio.regions.Region` class
(``docs/architecture.md``, "A region kind's blueprint spec").
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, TypeVar

import attrs

from regio.blueprint.capturespec import CaptureSpec
from regio.blueprint.fields import (
    Admission,
    Budget,
    EvictionStrategy,
    FieldRule,
    Hook,
    Int0,
    Int1,
    Mark,
    Name,
    NonEmpty,
    Share,
    Volatility,
    _field,
)

__all__ = [
    "KINDS",
    "KIND_ALIASES",
    "REGION_CLASSES",
    "ChecklistSpec",
    "ClearableSpec",
    "CompactHistorySpec",
    "CompactingSpec",
    "CustomSpec",
    "EvictionSpec",
    "KeyedSpec",
    "PinnedSpec",
    "RegionSpec",
    "SeedEntry",
    "SeedFile",
    "SlidingWindowSpec",
    "TemporarySpec",
    "region_kind",
]


@attrs.frozen(kw_only=True)
class SeedEntry:
    """One seeded entry. In YAML a plain string is shorthand for ``{text: ...}``."""

    text: str = _field("The entry's text.")
    key: NonEmpty | None = _field(
        "Key of the entry (required in keyed regions; checklist items are numbered by the "
        "region and take no key).",
        default=None,
    )
    role: Literal["user", "assistant"] | None = _field(
        "Message role for a `sliding_window` seed: `user` or `assistant`.", default=None
    )


@attrs.frozen(kw_only=True)
class SeedFile:
    """Seed text read from a file, relative to the blueprint file's folder."""

    file: NonEmpty = _field(
        "Path of a regular UTF-8 text file, relative to the blueprint file and under its folder "
        "(or a root the caller allows)."
    )
    text: str | None = attrs.field(default=None, eq=False, repr=False)


#: A seed in YAML: a string, a list of strings and entries, or ``{file: path}``; loaded as
#: entries or a :class:`SeedFile`.
Seed = Annotated[
    tuple[SeedEntry, ...] | SeedFile | None,
    FieldRule(
        describe="a string, a list of strings / {text, key, role} entries, or {file: path}",
        accepts=str | tuple[str | SeedEntry, ...] | SeedFile | None,
    ),
]


@attrs.frozen(kw_only=True)
class RegionSpec:
    """Fields shared by every region kind."""

    kind: ClassVar[str] = ""
    #: Other spellings of ``kind`` accepted on load (normalised to ``kind``).
    aliases: ClassVar[tuple[str, ...]] = ()
    #: The kind's one-line description, for docs and the schema.
    summary: ClassVar[str] = ""
    #: Window reclaim never shrinks the kind (any ``admission: reject`` region joins them).
    never_shrinks: ClassVar[bool] = False
    #: The kind's content changes every turn, so ``volatility: stable`` is a contradiction.
    written_every_turn: ClassVar[bool] = False

    name: Name = _field("Unique region name (letters, digits, `_`, `-`).")
    budget: Budget = _field(
        'Budget: tokens (`8000`) or a share of the window (`"12%"`): the room the region is '
        "guaranteed, and the most it holds unless it is `elastic`."
    )
    min_tokens: Int0 | None = _field(
        "Floor on the resolved budget in tokens (the floor wins over `max_tokens`).",
        default=None,
    )
    max_tokens: Int0 | None = _field("Ceiling on the resolved budget in tokens.", default=None)
    elastic: bool | None = _field(
        "`true`: the region may grow past its budget into whatever the window has free (up "
        "to `cap`), and its token marks follow that room, so it compacts or evicts when the "
        "window nears full, not when it passes a fixed share. Omitted: `true` for "
        "`sliding_window` (the conversation), `false` for every other kind.",
        default=None,
    )
    cap: Budget | None = _field(
        'An elastic region\'s most: tokens or a share of the window (`"80%"`). Omitted: the '
        "whole window.",
        default=None,
    )
    admission: Admission = _field(
        "`evict` makes room by the kind's rules; `reject` refuses a write that does not fit "
        "and exempts the region from window reclaim.",
        default="evict",
    )
    volatility: Volatility = _field(
        "`stable` (set once), `grows` (append-only) or `rewritten` (changes in place). Decides "
        "the region's place in the layout.",
        default="rewritten",
    )
    description: str = _field("Shown as the region's heading in the prompt.", default="")
    heading: bool = _field(
        "Open the region's text with `## <description or name>`. `false`: send the entries' "
        "bytes only, e.g. a region that holds the agent's own system prompt (regions "
        "rendered whole; the frozen chunks of `grows` regions keep their labels).",
        default=True,
    )
    seed: Seed = _field(
        "Initial content: a string, a list of entries (strings or `{text, key, role}`), or "
        "`{file: path}`.",
        default=None,
    )
    capture: tuple[CaptureSpec, ...] = _field(
        "Content the engine or a trace replay copies into this region: a list of rules "
        "(`system_prompt`, `footer`, `lookup`, `park`; see [Capture](#capture)). Omitted: "
        "nothing is captured; the region holds what the agent writes.",
        factory=tuple,
    )

    def region_options(self) -> dict[str, Any]:
        """The keyword options of :func:`regio.regions.make_region` for this region (the
        common ones; kinds add theirs)."""
        options: dict[str, Any] = {
            "name": self.name,
            "budget": self.budget,
            "volatility": self.volatility,
            "admission": self.admission,
            "description": self.description,
            "heading": self.heading,
        }
        if self.elastic is not None:
            options["elastic"] = self.elastic
        if self.cap is not None:
            options["cap"] = self.cap
        if self.min_tokens is not None or self.max_tokens is not None:
            tokens = (
                {"tokens": self.budget}
                if isinstance(self.budget, int)
                else {"percent": float(self.budget.rstrip("%"))}
            )
            options["budget"] = {
                **tokens,
                "min_tokens": self.min_tokens,
                "max_tokens": self.max_tokens,
            }
        return options

    def policy(self) -> str:
        """Short text of the kind's policy (eviction, trigger, source, ...)."""
        return ""


#: Spec class per kind, in registration (documentation) order.
REGION_CLASSES: dict[str, type[RegionSpec]] = {}
#: Accepted spellings normalised on load (``hashmap`` -> ``keyed``).
KIND_ALIASES: dict[str, str] = {}
_R = TypeVar("_R", bound=type[RegionSpec])


def region_kind(cls: _R) -> _R:
    """Register a region spec class under its ``kind`` (and ``aliases``); a later class of
    the same kind replaces it. The loader, the JSON Schema and ``regio validate`` look kinds
    up when they run, so a kind registered in the user's own module, after :mod:`regio` was
    imported, loads from YAML like the package's own (its runtime class, a
    :class:`regio.regions.Region` subclass of the same ``kind``, must be defined too). Its
    annotations are resolved here (``Annotated`` rules kept), so they may be strings."""
    attrs.resolve_types(cls, include_extras=True)
    REGION_CLASSES[cls.kind] = cls
    KIND_ALIASES.update(dict.fromkeys(cls.aliases, cls.kind))
    return cls


@region_kind
@attrs.frozen(kw_only=True)
class PinnedSpec(RegionSpec):
    kind: ClassVar[str] = "pinned"
    summary: ClassVar[str] = (
        "Task, identity, instructions. Never rolls off or reclaimed; a write that does not fit "
        "fails."
    )
    never_shrinks: ClassVar[bool] = True

    def policy(self) -> str:
        return "never"


@attrs.frozen(kw_only=True)
class EvictionSpec:
    """How a `sliding_window` drops its oldest turn groups (its eviction strategy)."""

    strategy: EvictionStrategy = _field(
        "`per_item` (drop the oldest group while over), `bulk` (wait until `max_items + "
        "overflow`, then drop back to `max_items`) or `compact` (summarize the oldest "
        "`compact_count` items into the paired `compact_history`).",
        default="per_item",
    )
    overflow: Int1 = _field(
        "`bulk`: items allowed above `max_items` before one bulk eviction.", default=10
    )
    compact_count: Int1 = _field(
        "`compact`: how many of the oldest items one compaction takes.", default=10
    )
    trigger: Mark | None = _field(
        "`bulk` / `compact`: token high-water mark, tokens or a share of the region budget "
        '(`"90%"`). Passing it frees down to `target` in one step (one compaction, or one '
        "bulk eviction). Omitted: 90% of the budget for `compact`, the budget for `bulk`.",
        default=None,
    )
    target: Mark | None = _field(
        "`bulk` / `compact`: token low-water target of that step, tokens or a share of the "
        'region budget. Omitted: derived from the cache prices (docs/runtime.md, "Token '
        'hysteresis").',
        default=None,
    )


@region_kind
@attrs.frozen(kw_only=True)
class SlidingWindowSpec(RegionSpec):
    kind: ClassVar[str] = "sliding_window"
    summary: ClassVar[str] = "The conversation as typed messages; evicts whole turn groups."
    written_every_turn: ClassVar[bool] = True

    max_items: Int1 | None = _field(
        "Most messages kept (turn groups are never split). Omitted: limited by tokens only.",
        default=None,
    )
    max_turns: Int0 | None = _field(
        "Keep the last N turns of earlier history (a turn starts at a user message); the "
        "current turn is always kept whole. Omitted: no turn limit.",
        default=None,
    )
    max_tool_calls: Int0 | None = _field(
        "Keep at most K tool calls of earlier history; the oldest go first, each with its "
        "results. Omitted: no limit.",
        default=None,
    )
    eviction: EvictionSpec = _field("Eviction strategy and its options.", factory=EvictionSpec)
    keep_at_least: Int0 | None = _field(
        "Keep at least this many tokens of recent turns verbatim: no compaction (automatic, "
        "by the cost controller, or on demand) and no hysteresis target leaves the "
        "conversation with fewer. Omitted: no floor.",
        default=None,
    )

    def region_options(self) -> dict[str, Any]:
        eviction = self.eviction
        extra: dict[str, Any] = {
            "bulk": {"overflow": eviction.overflow},
            "compact": {"compact_count": eviction.compact_count},
        }.get(eviction.strategy, {})
        if eviction.strategy in ("bulk", "compact"):
            marks = {"trigger": eviction.trigger, "target": eviction.target}
            extra.update({k: v for k, v in marks.items() if v is not None})
        return {
            **super().region_options(),
            "max_items": self.max_items,
            "max_turns": self.max_turns,
            "max_tool_calls": self.max_tool_calls,
            "eviction": {"name": eviction.strategy, **extra},
            **({"keep_at_least": self.keep_at_least} if self.keep_at_least is not None else {}),
        }

    def policy(self) -> str:
        ev = self.eviction
        detail = {"per_item": "", "bulk": f"(+{ev.overflow})", "compact": f"({ev.compact_count})"}
        items = f", max {self.max_items} items" if self.max_items else ""
        return f"{ev.strategy}{detail[ev.strategy]}{items}"


@region_kind
@attrs.frozen(kw_only=True)
class CompactingSpec(RegionSpec):
    kind: ClassVar[str] = "compacting"
    summary: ClassVar[str] = (
        "Working notes; past the trigger the whole content is summarized into the paired "
        "`compact_history`, then cleared."
    )
    written_every_turn: ClassVar[bool] = True

    compact_at: Share = _field(
        "Trigger: share of the budget at which the region queues a compaction.", default=0.8
    )
    threshold_tokens: Int1 | None = _field(
        "Trigger in tokens; with `compact_at`, whichever is reached first fires.", default=None
    )
    target: Share = _field(
        "Low-water mark: share of the budget a compaction brings the region down to "
        "(hysteresis; below `compact_at`); read by the runtime's compaction flush.",
        default=0.5,
    )

    def region_options(self) -> dict[str, Any]:
        """``target`` has no region option (the runtime's compaction flush reads it from the
        blueprint)."""
        return {
            **super().region_options(),
            "compact_at": self.compact_at,
            "threshold_tokens": self.threshold_tokens,
        }

    def policy(self) -> str:
        trigger = (
            f"{self.threshold_tokens} tok"
            if self.threshold_tokens is not None
            else f"{self.compact_at:.0%}"
        )
        return f"compact at {trigger} -> {self.target:.0%}"


@region_kind
@attrs.frozen(kw_only=True)
class CompactHistorySpec(RegionSpec):
    kind: ClassVar[str] = "compact_history"
    summary: ClassVar[str] = (
        "Append-only summaries from its `source`; over budget, its oldest summaries are merged."
    )
    never_shrinks: ClassVar[bool] = True

    source: Name = _field(
        "Name of the region whose summaries it receives (a `compacting` region or a "
        "`sliding_window` with `compact` eviction)."
    )
    volatility: Volatility = _field(
        "`grows` (the default for this kind: summaries are appended, so the history extends "
        "the cached prefix), `stable` or `rewritten`. Decides the region's place in the layout.",
        default="grows",
    )

    def region_options(self) -> dict[str, Any]:
        return {**super().region_options(), "source": self.source}

    def policy(self) -> str:
        return f"from {self.source}; merge oldest"


@region_kind
@attrs.frozen(kw_only=True)
class KeyedSpec(RegionSpec):
    kind: ClassVar[str] = "keyed"
    aliases: ClassVar[tuple[str, ...]] = ("hashmap",)
    summary: ClassVar[str] = (
        "Facts by key (alias `hashmap`); a write with an existing key replaces it in place."
    )
    never_shrinks: ClassVar[bool] = True

    max_entries: Int1 | None = _field(
        "Most keys kept; past it the least recently updated key is dropped.", default=None
    )

    def region_options(self) -> dict[str, Any]:
        return {**super().region_options(), "max_entries": self.max_entries}

    def policy(self) -> str:
        return f"LRU, max {self.max_entries} keys" if self.max_entries else "LRU by update"


@region_kind
@attrs.frozen(kw_only=True)
class TemporarySpec(RegionSpec):
    kind: ClassVar[str] = "temporary"
    summary: ClassVar[str] = (
        "Raw tool output and lookups; reclaimed oldest-first. The default kind."
    )
    written_every_turn: ClassVar[bool] = True

    def policy(self) -> str:
        return "oldest first"


@region_kind
@attrs.frozen(kw_only=True)
class ClearableSpec(RegionSpec):
    kind: ClassVar[str] = "clearable"
    summary: ClassVar[str] = "Scratch space; wiped whole first when the window is full."
    written_every_turn: ClassVar[bool] = True

    def policy(self) -> str:
        return "wipe whole"


@region_kind
@attrs.frozen(kw_only=True)
class ChecklistSpec(RegionSpec):
    kind: ClassVar[str] = "checklist"
    summary: ClassVar[str] = "Todo items (open/done, notes) managed by the todo_* tools."
    never_shrinks: ClassVar[bool] = True
    written_every_turn: ClassVar[bool] = True

    gate: bool = _field("When true, the agent may not finish while items are open.", default=False)

    def region_options(self) -> dict[str, Any]:
        return {**super().region_options(), "gate": self.gate, "max_entries": None}

    def policy(self) -> str:
        return "gate: no open items" if self.gate else "todo tools"


@region_kind
@attrs.frozen(kw_only=True)
class CustomSpec(RegionSpec):
    kind: ClassVar[str] = "custom"
    summary: ClassVar[str] = (
        "Author-defined behaviour through Python hooks, loaded only when custom hooks are allowed."
    )

    render: Hook | None = _field(
        "Hook `module:function(region) -> str` that renders the region's text.", default=None
    )
    on_write: Hook | None = _field(
        "Hook `module:function(region, entry) -> Entry | None` run before each write; it may "
        "transform the entry, or refuse it by returning None.",
        default=None,
    )
    on_overflow: Hook | None = _field(
        "Hook `module:function(region, tokens_to_free) -> list of entry ids` to drop, used by "
        "window reclaim phase 1.5.",
        default=None,
    )

    def region_options(self) -> dict[str, Any]:
        return {
            **super().region_options(),
            "render": self.render,
            "on_write": self.on_write,
            "on_overflow": self.on_overflow,
        }

    def policy(self) -> str:
        hooks = [h for h in ("render", "on_write", "on_overflow") if getattr(self, h)]
        return "hooks: " + (", ".join(hooks) or "none")


#: The package's own kind names, in registration order (the reference docs and the shipped
#: JSON Schema list these; :data:`REGION_CLASSES` also holds kinds registered later).
KINDS: tuple[str, ...] = tuple(REGION_CLASSES)
