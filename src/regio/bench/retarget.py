"""A blueprint retargeted at another model, as its user would declare it (``regio bench
--model``).

regio's choices depend on the model a blueprint declares: the cost controller prices a
compaction with that model's cache terms (``cache.profile``), and the summaries are billed at
the summarizer model's prices. Billing a replay of a blueprint declared for one model under
another model's prices measures a blueprint nobody would run: measured 2026-12-06 on seed
3636's generated sessions, the example coding blueprint (claude-sonnet-4-6, summaries by
claude-haiku-4-5) billed at gpt-5's prices cost 1.02-1.17x the cheapest peer in 5 of 18 runs
at 32k-128k, and 0.48-1.08x (dearer in 2) declared for gpt-5 with summaries by gpt-5-mini
(docs/benchmark.md, "Billed as declared").

:func:`retarget_blueprint` gives the blueprint with ``model.provider`` / ``model.name``, the
cache profile and the summarizer's model where it must follow (below) changed, and nothing
else: the window, budgets, regions and tokenizer stay as written. The summarizer: with
``summarizer_model`` it is that model of the new provider; a summarizer that wrote out the
agent's own model name follows the agent to the new model; an LLM summarizer
(``summarizer.provider`` ``anthropic`` / ``openai``) on the agent's own model moves to the new
provider, and one on a model of its own provider stays there; a model named for the agent's
old provider (``summarizer.provider: extractive``, priced as that provider's) is refused
without ``summarizer_model``, and a summarizer on its own server (``summarizer.base_url``) is
never moved (the errors say what to edit).
The result is validated as a loaded blueprint is.
"""

from __future__ import annotations

from typing import Literal

import attrs

from regio.bench.cachenames import check_cache_models, closest_models
from regio.blueprint.errors import BlueprintError
from regio.blueprint.loader import validate_blueprint
from regio.blueprint.spec import Blueprint, SummarizerSpec
from regio.cache.types import CacheRuleError
from regio.providers import cache_model_for
from regio.providers.registry import find_provider

__all__ = ["parse_model", "retarget_blueprint"]

#: Providers an LLM summarizer (``summarizer.provider``) can call.
_LLM_SUMMARIZERS: dict[str, Literal["anthropic", "openai"]] = {
    "anthropic": "anthropic",
    "openai": "openai",
}


def _article(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def parse_model(model: str) -> tuple[str, str]:
    """``(provider, name)`` of ``--model`` ``provider:model``, the provider as the registry
    names it (``claude`` -> ``anthropic``). Raises ``ValueError`` naming ``--model`` and a
    value that works when either part is missing, for ``oracle`` (a cache model, not a model a
    blueprint declares), and when the cache rules do not know the model (the closest names)."""
    given, sep, name = model.partition(":")
    given, name = given.strip().lower(), name.strip()
    if not sep or not given or not name:
        raise ValueError(f"--model {model!r}: give provider:model, e.g. --model openai:gpt-5")
    if given == "oracle":
        raise ValueError(
            f"--model {model}: oracle is a cache model, not a model a blueprint declares; "
            "give provider:model (e.g. --model openai:gpt-5) and --cache oracle to bill it there"
        )
    try:
        check_cache_models([f"{given}:{name}"], "--model", single=True)
    except CacheRuleError as exc:
        raise ValueError(str(exc)) from None
    found = find_provider(given)
    return (found.name if found is not None else given), name


def _named_summarizer(provider: str, name: str) -> str:
    """The model name of ``--summarizer-model`` (``NAME`` or ``provider:NAME``, any alias of
    ``provider``); raises ``ValueError`` naming the flag and a value that works when it is
    empty, names another provider, or the cache rules do not know it."""
    given, sep, bare = name.strip().rpartition(":")
    bare = bare.strip()
    other = find_provider(given.strip()) if sep else None
    if sep and (other is None or other.name != provider):
        raise ValueError(
            f"--summarizer-model {name}: the summaries are written by a model of the --model's "
            f"provider ({provider}); give its name alone, e.g. --summarizer-model "
            f"{_example(provider, bare)}"
        )
    if not bare or "*" in bare:
        raise ValueError(
            f"--summarizer-model {name!r}: give {_article(provider)} model name, e.g. "
            f"--summarizer-model {_example(provider, bare)}"
        )
    try:
        cache_model_for(f"{provider}:{bare}")
    except CacheRuleError:
        close, _ = closest_models(provider, bare)
        mean = f"; did you mean {', '.join(close)}" if close else ""
        raise ValueError(
            f"--summarizer-model {name}: no cache rule for {_article(provider)} model "
            f"{bare!r}{mean}; give {_article(provider)} model name, e.g. --summarizer-model "
            f"{_example(provider, bare)}"
        ) from None
    return bare


def _example(provider: str, model: str) -> str:
    """A model of ``provider`` the rules know, the closest to ``model`` if any."""
    close, _ = closest_models(provider, model)
    found = find_provider(provider)
    return close[0] if close else (found.default_model if found is not None else "")


def _summarizer(
    blueprint: Blueprint, provider: str, name: str, summarizer_model: str | None
) -> SummarizerSpec:
    """The summarizer of ``blueprint`` declared for ``provider:name`` (module doc)."""
    spec, old = blueprint.summarizer, blueprint.model
    flag = (
        f"--summarizer-model {summarizer_model}"
        if summarizer_model is not None
        else f"--model {provider}:{name}"
    )
    llm = spec.provider != "extractive"
    follows = spec.model is None or spec.model == old.name  # the agent's own model
    changes = (provider, name) != (old.provider, old.name)
    if spec.base_url is not None and (summarizer_model is not None or (follows and changes)):
        raise ValueError(
            f"{flag}: the blueprint's summarizer calls its own server ({spec.base_url}); "
            "edit summarizer.base_url / summarizer.model in the blueprint instead"
        )
    moves = summarizer_model is not None or (follows and provider != old.provider)
    if llm and moves and provider not in _LLM_SUMMARIZERS:
        raise ValueError(
            f"{flag}: an LLM summarizer runs on {', '.join(_LLM_SUMMARIZERS)} only; set "
            "summarizer.provider: extractive in the blueprint (the offline summarizer)"
        )
    moved = _LLM_SUMMARIZERS.get(provider, spec.provider) if llm and moves else spec.provider
    if summarizer_model is not None:
        model = _named_summarizer(provider, summarizer_model)
        return attrs.evolve(spec, model=model, provider=moved)
    if follows:
        own = None if spec.model is None else name
        return attrs.evolve(spec, model=own, provider=moved)
    if not llm and provider != old.provider:  # a model named for the agent's old provider
        raise ValueError(
            f"{flag}: the blueprint's summarizer model {spec.model!r} is {_article(old.provider)} "
            f"model; name {_article(provider)} model for the summaries with --summarizer-model"
        )
    return spec  # a summarizer on a provider of its own stays there


def retarget_blueprint(
    blueprint: Blueprint, model: str, summarizer_model: str | None = None
) -> Blueprint:
    """``blueprint`` declared for ``model`` (``provider:model``, e.g. ``openai:gpt-5``):
    ``model.provider``, ``model.name`` and ``cache.profile`` set to it; with
    ``summarizer_model`` (a model of the same provider, ``gpt-5-mini`` or
    ``openai:gpt-5-mini``) the summaries are written by that model; the summarizer otherwise
    as the module doc says. Everything else is kept.

    Raises ``ValueError`` naming the flag and the fix: from :func:`parse_model`; when the
    cache rules do not know ``summarizer_model``; when the provider changes and the blueprint
    names a summarizer model of its old provider without a ``summarizer_model`` to replace it
    (it would be looked up under the new provider); for a summarizer on its own server
    (``base_url``) that the change would move, or an LLM summarizer moved to a provider it
    cannot call; and when the blueprint declared for ``model`` fails the loader's checks (e.g.
    ``context_management``, which only Anthropic's API takes).
    """
    provider, name = parse_model(model)
    summarizer = _summarizer(blueprint, provider, name, summarizer_model)
    moved = attrs.evolve(
        blueprint,
        model=attrs.evolve(blueprint.model, provider=provider, name=name),
        cache=attrs.evolve(blueprint.cache, profile=f"{provider}:{name}"),
        summarizer=summarizer,
    )
    try:
        validate_blueprint(moved)
    except BlueprintError as exc:
        raise ValueError(
            f"--model {provider}:{name}: the blueprint declared for it is not valid: {exc}"
        ) from None
    return moved
