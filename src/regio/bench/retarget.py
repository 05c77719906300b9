"""A blueprint retargeted at another model, as its user would declare it (``regio bench
--model``).

regio's choices depend on the model a blueprint declares: the cost controller prices a
compaction with that model's cache terms (``cache.profile``), and the summaries are billed at
the summarizer model's prices. Billing a replay of a blueprint declared for one model under
another model's prices measures a blueprint nobody would run: on seed 3636's generated
sessions, the example coding blueprint (claude-sonnet-4-6, summaries by claude-haiku-4-5)
billed at gpt-5's prices cost 1.02-1.17x the cheapest peer in 5 of 18 runs at 32k-128k, and
0.48-1.08x (dearer in 2) declared for gpt-5 with summaries by gpt-5-mini
(docs/benchmark.md, "Billed as declared").

:func:`retarget_blueprint` gives the blueprint with ``model.provider`` / ``model.name``, the
cache profile and (optionally) the summarizer's model changed, and nothing else: the window,
budgets, regions and tokenizer stay as written.
"""

from __future__ import annotations

from typing import Literal

import attrs

from regio.bench.cachenames import check_cache_models
from regio.blueprint.spec import Blueprint
from regio.cache.types import CacheRuleError

__all__ = ["retarget_blueprint"]

#: Providers an LLM summarizer (``summarizer.provider``) can call.
_LLM_SUMMARIZERS: dict[str, Literal["anthropic", "openai"]] = {
    "anthropic": "anthropic",
    "openai": "openai",
}


def _known(name: str, flag: str) -> None:
    """Raise ``ValueError`` naming ``flag``, the closest known names and a value that works
    unless the cache rules know model ``name`` (``provider:model``;
    :func:`regio.bench.cachenames.check_cache_models`). A model known without a price is
    accepted: the bench then reports its cost as unpriced, as for ``--cache``."""
    try:
        check_cache_models([name], flag)
    except CacheRuleError as exc:
        raise ValueError(str(exc)) from None


def retarget_blueprint(
    blueprint: Blueprint, model: str, summarizer_model: str | None = None
) -> Blueprint:
    """``blueprint`` declared for ``model`` (``provider:model``, e.g. ``openai:gpt-5``):
    ``model.provider``, ``model.name`` and ``cache.profile`` set to it; with
    ``summarizer_model`` (a model name of the same provider, e.g. ``gpt-5-mini``) the
    summaries are written by that model. Everything else is kept.

    Raises ``ValueError`` naming the flag and the fix when ``model`` has no ``provider:``
    part, when the cache rules do not know it or ``summarizer_model``, or when the provider
    changes and the blueprint names a summarizer model of its old provider without a
    ``summarizer_model`` to replace it (that model would be looked up under the new provider).
    """
    provider, sep, name = model.partition(":")
    provider, name = provider.strip().lower(), name.strip()
    if not sep or not provider or not name:
        raise ValueError(f"--model {model!r}: give provider:model, e.g. openai:gpt-5")
    _known(f"{provider}:{name}", "--model")
    spec = blueprint.summarizer
    named = blueprint.summary_model
    if summarizer_model is not None:
        summarizer_model = summarizer_model.strip()
        _known(f"{provider}:{summarizer_model}", "--summarizer-model")
        if spec.provider == "extractive":
            spec = attrs.evolve(spec, model=summarizer_model)
        elif provider in _LLM_SUMMARIZERS:
            spec = attrs.evolve(spec, model=summarizer_model, provider=_LLM_SUMMARIZERS[provider])
        else:
            raise ValueError(
                f"--summarizer-model {summarizer_model}: the blueprint's summarizer calls "
                f"{spec.provider}; an LLM summarizer runs on {sorted(_LLM_SUMMARIZERS)} only"
            )
    elif named is not None and named[0] != provider:
        raise ValueError(
            f"--model {model}: the blueprint's summarizer model {named[1]!r} is a {named[0]} "
            f"model; name a {provider} model for the summaries with --summarizer-model"
        )
    return attrs.evolve(
        blueprint,
        model=attrs.evolve(blueprint.model, provider=provider, name=name),
        cache=attrs.evolve(blueprint.cache, profile=f"{provider}:{name}"),
        summarizer=spec,
    )
