"""Engine options from a blueprint (``Engine.from_blueprint``).

Mapping:

* ``model.provider`` / ``model.name`` -> default provider and model of requests;
  ``model.context_window`` and ``model.max_output_tokens`` -> budget truth (the output reserve);
* ``layout.strategy`` / ``chunk_tokens`` / ``settle_share`` and ``cache.ttl`` -> the layout;
* ``summarizer.provider`` picks the summarizer (``extractive``, offline, by default; ``anthropic``
  / ``openai``: a :class:`regio.compaction._forking.ForkSummarizer` on ``summarizer.model``);
  ``summarizer.max_summary_tokens`` / ``context_window`` (default: the agent model's window)
  size it; ``summarizer.instructions`` is added to the
  standing summary requirements (never replacing them);
* ``tools.context`` -> ``context_tools`` (which context tools are offered);
* ``compacting.target`` (share of the region budget) -> the region's hysteresis target;
* ``relief`` -> ``relief`` (:class:`regio.policies.relief.ReliefPolicy`, ``None`` when off);
* ``context_management`` -> ``context_management`` (the API's ``{"edits": [...]}`` value).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from regio.blueprint import Blueprint, CompactingSpec, build_window, dump_blueprint, load_blueprint
from regio.blueprint.contextspec import edits_value
from regio.blueprint.reliefspec import relief_policy
from regio.clients import AnthropicProvider, OpenAICompatibleProvider
from regio.compaction._forking import ForkSummarizer
from regio.policies.hysteresis import resolve_mark
from regio.providers.registry import chat_format_for
from regio.session._options import EngineOptions
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.summarizers._protocol import DEFAULT_STANDING_INSTRUCTIONS
from regio.tokens import get_counter

if TYPE_CHECKING:
    from regio.summarizers._protocol import SummaryFn
    from regio.tokens import TokenCounter

__all__ = ["blueprint_summarizer", "engine_options", "standing_instructions"]


def standing_instructions(blueprint: Blueprint) -> str:
    """The built-in summary requirements plus the blueprint's own (added, never replacing)."""
    extra = blueprint.summarizer.instructions.strip()
    if not extra:
        return DEFAULT_STANDING_INSTRUCTIONS
    return f"{DEFAULT_STANDING_INSTRUCTIONS}\n\nAlso required by this blueprint:\n{extra}"


def blueprint_summarizer(bp: Blueprint) -> Any:
    """The summarizer the blueprint's ``summarizer`` section declares: the offline
    :class:`ExtractiveSummarizer` (``provider: extractive``, the default), or a
    :class:`regio.compaction._forking.ForkSummarizer` over the ``anthropic`` / ``openai`` provider
    client of :mod:`regio.clients` asking for ``summarizer.model`` (default: the
    agent's model). The SDK and its API key are needed only when a summary is written."""
    spec = bp.summarizer
    window = spec.context_window or bp.model.context_window
    if spec.provider == "extractive":
        return ExtractiveSummarizer(
            context_window=window, max_summary_tokens=spec.max_summary_tokens
        )

    model = spec.model or bp.model.name
    provider: Any
    if spec.provider == "anthropic":
        provider = AnthropicProvider(model=model, max_tokens=spec.max_summary_tokens)
    else:
        provider = OpenAICompatibleProvider(
            model=model, base_url=spec.base_url, max_tokens=spec.max_summary_tokens
        )
    return ForkSummarizer(
        provider, context_window=window, max_summary_tokens=spec.max_summary_tokens
    )


def _load(blueprint: str | Path | Blueprint) -> Blueprint:
    if isinstance(blueprint, Blueprint):
        return blueprint
    if isinstance(blueprint, Path):
        return load_blueprint(blueprint)
    return load_blueprint(str(blueprint))


def engine_options(
    blueprint: str | Path | Blueprint,
    *,
    summarizer: SummaryFn | None = None,
    token_counter: TokenCounter | None = None,
    allow_custom_hooks: bool = False,
) -> dict[str, Any]:
    """Keyword arguments of :class:`regio.engine.Engine` for ``blueprint`` (path, YAML text
    or :class:`Blueprint`): ``window``, ``summarizer`` and the :class:`EngineOptions` the
    blueprint declares. Raises :class:`regio.blueprint.BlueprintError` when invalid."""
    bp = _load(blueprint)
    counter = token_counter
    if counter is None:
        chat_format = chat_format_for(bp.model.provider, bp.model.name)
        counter = get_counter(bp.tokenizer, chat_format=chat_format, model=bp.model.name)
    window = build_window(bp, counter=counter, allow_custom_hooks=allow_custom_hooks)
    if summarizer is None:
        summarizer = blueprint_summarizer(bp)
    targets: dict[str, int] = {}
    for spec in bp.regions:
        if isinstance(spec, CompactingSpec):
            region = window.region(spec.name)
            targets[spec.name] = int(spec.target * region.budget)
    options = EngineOptions(
        provider=bp.model.provider,
        model=bp.model.name,
        context_window=bp.model.context_window,
        output_reserve=bp.model.max_output_tokens,
        compact_trigger=(
            None
            if bp.window.compact_trigger is None
            else resolve_mark(bp.window.compact_trigger, bp.window_tokens)
        ),
        strategy=bp.layout.strategy,
        ttl=bp.cache.ttl,
        chunk_tokens=bp.layout.chunk_tokens,
        settle_share=bp.layout.settle_share,
        targets=targets,
        standing_instructions=standing_instructions(bp),
        refusal_phrases=bp.summarizer.refusal_phrases,
        carry_forward=bp.summarizer.carry_forward,
        blueprint_text=dump_blueprint(bp, inline_seeds=True),
        tokenizer=bp.tokenizer,
        context_tools=bp.tools.context,
        relief=relief_policy(bp.relief),
        context_management=(
            edits_value(bp.context_management) if bp.context_management is not None else None
        ),
        allow_custom_hooks=allow_custom_hooks,
    )
    return {"window": window, "summarizer": summarizer, "options": options}
