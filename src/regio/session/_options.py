"""Every option of an engine, with its default declared once: :class:`EngineOptions`.

Options are data: they are saved with the engine as they are and never change while it runs
(build a new value with :func:`attrs.evolve`). What changes while an engine runs lives in
:class:`regio.session._state.EngineState`; code the engine calls (token counter, summarizer,
clock, price lookup) is passed to :class:`regio.engine.Engine` beside the options.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import msgspec

from regio.layout import DEFAULT_CHUNK_TOKENS, DEFAULT_SETTLE_SHARE, ToolSpec, strategy_for
from regio.layout.model import TTLS
from regio.policies.relief import ReliefPolicy
from regio.providers.registry import DEFAULT_PROVIDER
from regio.summarizers._protocol import DEFAULT_STANDING_INSTRUCTIONS
from regio.summarizers._validity import normalize_phrase

from ._toolargs import DEFAULT_TOOL_LIMITS, ToolLimits

__all__ = ["CARRY_FORWARD_MODES", "CONTEXT_TOOL_MODES", "TOOL_NAMES", "EngineOptions"]

#: The context tools, in the order they are offered (:mod:`regio.engine._tools`).
TOOL_NAMES = (
    "context_write",
    "context_append",
    "context_read",
    "context_delete",
    "context_list",
    "todo_add",
    "todo_done",
    "todo_note",
    "compact",
    "context_restore",
)

#: ``context_tools`` modes besides an explicit tuple of tool names.
CONTEXT_TOOL_MODES = ("auto", "all", "none")

#: ``carry_forward`` values: ``append`` keeps every summary, ``replace`` keeps one rolling
#: summary per source region.
CARRY_FORWARD_MODES = ("append", "replace")


def _targets(value: Mapping[str, int] | None) -> dict[str, int]:
    return {str(k): int(v) for k, v in (value or {}).items()}


def _context_tools_mode(value: str | Iterable[object]) -> str | tuple[str, ...]:
    if isinstance(value, str):
        return value
    return tuple(str(v) for v in value)


def _known_context_tools(
    _: object, attribute: attrs.Attribute[Any], value: str | tuple[str, ...]
) -> None:
    if isinstance(value, str):
        if value not in CONTEXT_TOOL_MODES:
            raise ValueError(
                f"{attribute.name} must be one of {', '.join(CONTEXT_TOOL_MODES)} or a tuple "
                f"of tool names, got {value!r}"
            )
        return
    unknown = [v for v in value if v not in TOOL_NAMES]
    if unknown:
        raise ValueError(
            f"{attribute.name}: unknown context tool(s) {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(TOOL_NAMES)}"
        )


def _known_strategy(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    """A layout strategy regio knows (built in or registered,
    :func:`regio.layout.strategy_for`): checked when the options are made, so an engine (or
    a loaded state) never holds one every request would refuse."""
    if not isinstance(value, str):
        raise ValueError(f"{attribute.name} must be a strategy name, got {value!r}")
    strategy_for(value)  # raises LayoutError naming the known strategies


def _phrase_tuple(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str):  # one phrase, not its characters
        return (value,)
    return tuple(value)


def _phrases(_: object, attribute: attrs.Attribute[Any], value: tuple[Any, ...]) -> None:
    for phrase in value:
        if not isinstance(phrase, str) or not normalize_phrase(phrase):
            raise ValueError(
                f"{attribute.name}: every phrase must be text with a word in it, got {phrase!r}"
            )


def _relief(value: object) -> ReliefPolicy | None:
    """``None``, a :class:`ReliefPolicy`, or its mapping (a saved state) as one."""
    if value is None or isinstance(value, ReliefPolicy):
        return value
    return msgspec.convert(value, ReliefPolicy)


def _at_least_one(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 1:
        raise ValueError(f"{attribute.name} must be >= 1, got {value}")


def _window(_: object, attribute: attrs.Attribute[int | None], value: int | None) -> None:
    from ._declared import check_context_window

    check_context_window(value, f"EngineOptions.{attribute.name}")


def _context_management(value: object) -> dict[str, Any] | None:
    """The API value, validated and with every default spelled out (``None`` stays)."""
    if value is None:
        return None
    from regio.cache.context_editing import edits_payload, parse_edits

    return edits_payload(parse_edits(value))


def _share(_: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not 0 < value <= 1:
        raise ValueError(f"{attribute.name} is a share of the window in (0, 1], got {value}")


@attrs.frozen(kw_only=True)
class EngineOptions:
    """The options of one engine (sizes in tokens). Raises :class:`ValueError` for a value out
    of range (``context_window`` < 1, ``no_progress_limit`` < 1, ``chunk_tokens`` < 1,
    ``settle_share`` outside ``(0, 1]``, an unknown ``carry_forward``, ``context_tools``,
    ``ttl`` or layout ``strategy``)."""

    #: Provider of :meth:`Engine.request` when none is given (``anthropic``, ``openai``, ...;
    #: :data:`regio.providers.DEFAULT_PROVIDER`).
    provider: str = DEFAULT_PROVIDER
    #: Model of requests when none is given; empty: the provider's default pricing row.
    model: str = ""
    #: The model's context window; ``None``: the window's ``max_tokens`` is the only limit.
    context_window: int | None = attrs.field(default=None, validator=_window)
    #: Tokens kept free for the answer (the request's ``max_tokens``); 0: not reserved.
    output_reserve: int = 0
    #: Layout strategy (``regio``, or the comparison layouts ``naive``, ``kind``,
    #: ``volatility``); ``regio`` is the cache-aware layout of ``docs/layout.md``.
    strategy: str = attrs.field(default="regio", validator=_known_strategy)
    #: Cache TTL the layout plans breakpoints for: ``5m`` or ``1h`` (the two TTLs of
    #: https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching).
    ttl: str = attrs.field(default="5m", validator=attrs.validators.in_(TTLS))
    #: Size of the frozen chunks ``grows`` regions are packed into
    #: (:data:`regio.layout.DEFAULT_CHUNK_TOKENS`, where the default and its source are declared).
    chunk_tokens: int = attrs.field(default=DEFAULT_CHUNK_TOKENS, validator=_at_least_one)
    #: Share of the window unsettled ``grows`` notes may reach in the conversation before they
    #: are settled into their region (:data:`regio.layout.DEFAULT_SETTLE_SHARE`).
    settle_share: float = attrs.field(default=DEFAULT_SETTLE_SHARE, validator=_share)
    #: Region name -> hysteresis target (tokens kept after a compaction); a region not named
    #: keeps half its budget, never more than half its trigger (``docs/runtime.md``).
    targets: Mapping[str, int] = attrs.field(factory=dict, converter=_targets)
    #: Whole-context compaction trigger in calibrated tokens; ``None``: off.
    compact_trigger: int | None = None
    #: The cost controller picks a compacting conversation's trigger from the cache
    #: economics (docs/runtime.md, "The cost controller"): earlier than the window-fill mark
    #: when that is cheaper per request. Off: compact at the window-fill mark.
    cost_control: bool = True
    #: Flush pending compactions at every turn boundary and recover from overflow by
    #: compacting; off: the caller calls :meth:`Engine.flush` / :meth:`Engine.compact`.
    auto_compact: bool = True
    #: Rejected summaries in a row before :class:`CompactionNoProgressError` (the
    #: no-progress rule of ``docs/runtime.md``: three strikes stop a loop that frees nothing).
    no_progress_limit: int = attrs.field(default=3, validator=_at_least_one)
    #: Hysteresis cuts prefer user-turn starts, so whole turns go.
    cut_at_turns: bool = False
    #: ``append`` (summaries accumulate) or ``replace`` (one rolling summary per source).
    carry_forward: str = attrs.field(
        default="append", validator=attrs.validators.in_(CARRY_FORWARD_MODES)
    )
    #: Requirements every summary must meet (the blueprint's instructions are added to them).
    standing_instructions: str = DEFAULT_STANDING_INSTRUCTIONS
    #: Openings that make a summary a refusal besides the built-in English ones (a deployment
    #: in another language adds its own: ``("Lo siento", "No puedo")``); compared
    #: case-insensitively with the summary's start (:mod:`regio.summarizers._validity`).
    refusal_phrases: tuple[str, ...] = attrs.field(
        default=(), converter=_phrase_tuple, validator=_phrases
    )
    #: Session id passed to the layout (provider cache routing keys); ``None``: none.
    session_id: str | None = None
    #: The blueprint the engine was built from, as YAML (saved so a state file stands alone).
    blueprint_text: str | None = None
    #: Tokenizer name of the blueprint (rebuilds the counter on load).
    tokenizer: str | None = None
    #: Which context tools are offered (sent with every request and accepted by
    #: ``handle_tool_call``): ``"auto"`` (every applicable one when some region is
    #: agent-writable, none otherwise), ``"all"``, ``"none"`` or a tuple of tool names
    #: (:data:`regio.engine._tools.TOOL_NAMES`). An agent that never calls them should not pay
    #: for their schemas on every request (measured in docs/benchmark.md).
    context_tools: str | tuple[str, ...] = attrs.field(
        default="auto", converter=_context_tools_mode, validator=_known_context_tools
    )
    #: Application tools sent with every request after the context tools.
    extra_tools: tuple[ToolSpec, ...] = attrs.field(default=(), converter=tuple)
    #: Custom region hooks (``module:function``) may be imported.
    allow_custom_hooks: bool = False
    #: Anthropic server-side context editing sent with every Anthropic request: the API's
    #: ``context_management`` value (``{"edits": [{"type": "clear_tool_uses_20250919", ...}]}``,
    #: https://platform.claude.com/docs/en/build-with-claude/context-editing), validated
    #: (:class:`regio.cache.context_editing.ContextEditingError`) and stored with its defaults
    #: spelled out; ``None``: none. A request for another API raises that error.
    context_management: dict[str, Any] | None = attrs.field(
        default=None, converter=_context_management
    )
    #: Bounds on the agent's context-tool arguments: echoed length (200 characters), nesting
    #: (32), integer digits (64), JSON text (1 MiB); see :mod:`regio.session._toolargs`.
    tool_limits: ToolLimits = DEFAULT_TOOL_LIMITS
    #: The relief chain run under token pressure before summarization (clear old tool
    #: results, trim oversized text, then summarize) and the per-tool admission rules
    #: (:mod:`regio.compaction.relief._chain`); ``None``: off, token pressure goes straight to the
    #: region's summarization.
    relief: ReliefPolicy | None = attrs.field(default=None, converter=_relief)
    #: Delegate compaction to the provider (:mod:`regio.compaction._delegation`): every Anthropic
    #: Messages and OpenAI Responses request asks the provider to compact the conversation
    #: once its input passes this many tokens (Anthropic's ``compact_20260112`` trigger, at
    #: least 50,000 there; OpenAI's ``compact_threshold``), and
    #: :meth:`regio.engine.Engine.adopt_compaction` keeps a readable summary beside the item
    #: it returns. ``None``: off (regio summarizes client-side). A request for another API
    #: raises :class:`regio.compaction._delegation.ProviderCompactionError`.
    delegate_compaction: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(_at_least_one)
    )

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names, in declaration order."""
        return tuple(a.name for a in attrs.fields(cls))

    @classmethod
    def split(cls, values: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``values`` split into ``(options, the rest)`` by :meth:`names`."""
        names = set(cls.names())
        options = {k: v for k, v in values.items() if k in names}
        rest = {k: v for k, v in values.items() if k not in names}
        return options, rest
