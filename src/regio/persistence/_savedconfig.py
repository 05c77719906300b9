"""The engine options a state file records: :class:`EngineConfig`, derived from
:class:`regio.session._options.EngineOptions`, the one declaration of every option, its type and
its default.

Every option field is saved as it is, under its own name, except the ones in
:data:`NOT_SAVED` (each with the reason). An option added to :class:`EngineOptions` is saved
from then on with no change here, and a state file written before it existed still loads: the
saved field's default is the option's default. Beside the options a config records what the
engine was built with that is not an option (:class:`ConfigExtras`: the token counter's name
and chat format, the summarizer's limits, the blueprint's hash).

The layout is the one state files have always had (a flat map of option names and the extras),
so every earlier state file loads. A saved relief policy is read without the limits regio added
since (:class:`SavedReliefPolicy`): a tool's ``max_result_tokens`` below
:data:`regio.policies.relief.MARKER_TOKENS` (accepted before 2026-12) loads raised to it, with a
:class:`ReliefLimitRaisedWarning` naming the file (the session is not lost for it; a new
blueprint or policy still refuses such a limit).
"""

from __future__ import annotations

import typing
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs
import msgspec

from regio.policies.relief import MARKER_TOKENS, ReliefPolicy, ToolRelief
from regio.session._options import EngineOptions

__all__ = [
    "NOT_SAVED",
    "SAVED_OPTIONS",
    "ConfigExtras",
    "EngineConfig",
    "ReliefLimitRaisedWarning",
    "SavedReliefPolicy",
    "SavedToolRelief",
    "config_options",
    "engine_config",
]

#: Options a state file never records, and why.
NOT_SAVED: Mapping[str, str] = {
    "allow_custom_hooks": (
        "trust is the loader's decision: a state file is data and never enables importing "
        "code (Engine.load(allow_custom_hooks=...))"
    ),
}

#: The option names a state file records, in :class:`EngineOptions` order.
SAVED_OPTIONS: tuple[str, ...] = tuple(n for n in EngineOptions.names() if n not in NOT_SAVED)


class ConfigExtras(msgspec.Struct):
    """What a config records beside the options: ``counter_name`` / ``chat_format`` of the
    token counter (a known one is rebuilt on load), the summarizer's ``summarizer_window`` and
    ``summarizer_max_tokens`` (tokens), and ``blueprint_sha256``, the hex sha256 of
    ``blueprint_text`` (``None`` for an engine built without a blueprint)."""

    counter_name: str
    chat_format: str | None
    summarizer_window: int
    summarizer_max_tokens: int
    blueprint_sha256: str | None = None


class ReliefLimitRaisedWarning(UserWarning):
    """A saved relief limit below today's floor was raised on load (message: the file, the
    tool, the saved and the loaded value)."""


class SavedToolRelief(ToolRelief, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A :class:`ToolRelief` as a state file holds it: any ``max_result_tokens`` (states of
    regio before 2026-12 could save one below :data:`MARKER_TOKENS`); :func:`config_options`
    raises it. (The field is the one that differs: the policy's declares the floor, which a
    decoder checks.)"""

    max_result_tokens: int | None = None

    def __post_init__(self) -> None:
        """Accepts what an older regio saved (:func:`config_options` applies the floor)."""


class SavedReliefPolicy(ReliefPolicy, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A :class:`ReliefPolicy` as a state file holds it (its tools :class:`SavedToolRelief`)."""

    tools: dict[str, SavedToolRelief] = msgspec.field(default_factory=dict)  # type: ignore[assignment]


def _saved_field(attribute: attrs.Attribute[Any], hint: object) -> tuple[str, Any, Any]:
    """``(name, type, default)`` of one option as a saved field (its default is the option's;
    the relief policy is read as a :class:`SavedReliefPolicy`)."""
    default: Any = attribute.default
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        default = msgspec.field(default_factory=default.factory)
    if attribute.name == "relief":
        hint = SavedReliefPolicy | None
    return attribute.name, hint, default


def _config_type() -> Any:
    hints = typing.get_type_hints(EngineOptions)
    fields = [
        _saved_field(a, hints[a.name])
        for a in attrs.fields(EngineOptions)
        if a.name in SAVED_OPTIONS
    ]
    doc = (
        "The engine's saved options (every :class:`EngineOptions` field but :data:`NOT_SAVED`, "
        "same names, types and defaults) and the :class:`ConfigExtras`."
    )
    config = msgspec.defstruct("EngineConfig", fields, bases=(ConfigExtras,), module=__name__)
    config.__doc__ = doc
    return config


if TYPE_CHECKING:
    from regio.layout.model import ToolSpec
    from regio.session._toolargs import ToolLimits

    class EngineConfig(ConfigExtras, kw_only=True):
        """The engine's saved options and the :class:`ConfigExtras` (built from
        :class:`EngineOptions` at import: one attribute per saved option). The fields below
        are what the type checker sees; ``tests/test_saved_config_fields.py`` checks that they
        are the built struct's, name for name."""

        provider: str
        model: str
        context_window: int | None
        output_reserve: int
        strategy: str
        ttl: str
        chunk_tokens: int
        settle_share: float
        targets: Mapping[str, int]
        compact_trigger: int | None
        cost_control: bool
        auto_compact: bool
        no_progress_limit: int
        cut_at_turns: bool
        carry_forward: str
        standing_instructions: str
        refusal_phrases: tuple[str, ...]
        session_id: str | None
        blueprint_text: str | None
        tokenizer: str | None
        context_tools: str | tuple[str, ...]
        extra_tools: tuple[ToolSpec, ...]
        context_management: dict[str, Any] | None
        tool_limits: ToolLimits
        relief: SavedReliefPolicy | None
        delegate_compaction: int | None

else:
    EngineConfig = _config_type()


def engine_config(options: EngineOptions, extras: ConfigExtras) -> EngineConfig:
    """The :class:`EngineConfig` of ``options`` (every saved option as it is; mappings copied,
    so the config shares no container with the engine) and ``extras``."""
    values = {name: getattr(options, name) for name in SAVED_OPTIONS}
    values = {k: dict(v) if isinstance(v, Mapping) else v for k, v in values.items()}
    return EngineConfig(**values, **msgspec.structs.asdict(extras))


def _loaded_relief(relief: ReliefPolicy | None, source: str) -> ReliefPolicy | None:
    """``relief`` as a :class:`ReliefPolicy`, every tool's ``max_result_tokens`` raised to at
    least :data:`MARKER_TOKENS` (a :class:`ReliefLimitRaisedWarning` naming ``source`` for
    each one raised)."""
    if relief is None or type(relief) is ReliefPolicy:
        return relief
    tools: dict[str, Any] = {}
    for name, tool in relief.tools.items():
        limit = tool.max_result_tokens
        if limit is not None and limit < MARKER_TOKENS:
            warnings.warn(
                f"{source}: relief.tools.{name}.max_result_tokens {limit} is below the trim "
                f"marker's {MARKER_TOKENS} tokens; loaded as {MARKER_TOKENS} (saved so on the "
                "next save)",
                ReliefLimitRaisedWarning,
                stacklevel=5,
            )
            limit = MARKER_TOKENS
        tools[name] = msgspec.structs.replace(tool, max_result_tokens=limit)
    return msgspec.convert(
        msgspec.to_builtins(msgspec.structs.replace(relief, tools=tools)), ReliefPolicy
    )


def config_options(config: EngineConfig, source: str = "the saved state") -> dict[str, Any]:
    """The saved options of ``config`` as :class:`EngineOptions` keywords (the options'
    converters turn saved lists back into tuples; the relief policy's limits as
    :func:`_loaded_relief` raises them, warnings naming ``source``)."""
    options = {name: getattr(config, name) for name in SAVED_OPTIONS}
    options["relief"] = _loaded_relief(options["relief"], source)
    return options
