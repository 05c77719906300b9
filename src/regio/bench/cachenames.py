"""The bench's ``--cache`` names checked before any work: an unknown one is refused with the
option, the bad value, the closest known names and a value that works
(:func:`check_cache_models`)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from regio.cache.rules import default_rules
from regio.cache.types import CacheRuleError
from regio.providers import cache_model_for
from regio.providers.base import Provider
from regio.providers.registry import find_provider, providers

__all__ = ["check_cache_models", "closest_models"]


def _providers() -> list[str]:
    """The providers with cache rules."""
    return sorted(p.name for p in providers() if p.cache_rule is not None)


def _models(provider: Provider) -> list[str]:
    """The model families with a packaged cache rule for ``provider``, without their trailing
    ``*`` (a family that is only a prefix, such as ``gpt-5-*``, is left out)."""
    if provider.cache_rule is None:
        return []
    key = provider.cache_rule.provider
    families = {g for r in default_rules().rules if r.provider == key for g in r.model_family}
    stems = {g.rstrip("*") for g in families}
    return sorted(g for g in stems if g and g[-1].isalnum())


def _close(word: str, known: Sequence[str]) -> list[str]:
    return difflib.get_close_matches(word.strip().lower(), known, n=3, cutoff=0.6)


def closest_models(provider: str, model: str) -> tuple[list[str], list[str]]:
    """``(closest, known)``: the model families with a packaged cache rule for ``provider``
    (its registry name) closest to ``model`` (at most three, ``difflib``), and all of them;
    both empty for a provider without cache rules."""
    found = find_provider(provider)
    known = _models(found) if found is not None else []
    return _close(model, known), known


def _works(name: str) -> bool:
    """Whether the cache rules know ``provider:model`` ``name``."""
    try:
        cache_model_for(name)
    except CacheRuleError:
        return False
    return True


def _help(option: str, name: str, single: bool = False) -> str | None:
    """What to tell the user about ``name`` given to ``option`` when it has no cache rule:
    did-you-mean and a value to use (one that the rules know); ``None`` when nothing better
    than the cache layer's own message can be said. ``single``: the option takes one
    ``provider:model``, not a list and not ``oracle``."""
    oracle = name.startswith("oracle:")
    given, _, model = (name[len("oracle:") :] if oracle else name).partition(":")
    given, model, head = given.strip(), model.strip(), "oracle:" if oracle else ""
    provider = find_provider(given)
    if provider is None or provider.cache_rule is None:
        known = _providers()
        close = _close(given, known)
        guess = close[0] if close else known[0]
        mean = f"; did you mean {', '.join(close)}" if close else ""
        guessed = find_provider(guess)
        default = guessed.default_model if guessed is not None else ""
        example = model if model and _works(f"{guess}:{model}") else default
        extra = "" if single else " (or oracle[:provider[:model]])"
        return (
            f"{option} {name}: unknown cache provider {given!r}{mean}; providers with cache "
            f"rules: {', '.join(known)}{extra}; for example "
            f"{option} {head}{guess}{f':{example}' if example else ''}"
        )
    models = _models(provider)
    if not models:
        return None
    close = _close(model, models)
    mean = f"; did you mean {', '.join(close)}" if close else ""
    example = close[0] if close else provider.default_model
    listed = f"{provider.name!r} models with rules: {', '.join(models)}"
    shape = listed if single else f"a comma-separated list of provider[:model]; {listed}"
    return (
        f"{option} {name}: no cache rule for model {model!r} of {provider.name!r}{mean}; use "
        f"{option} {head}{provider.name}:{example} ({shape})"
    )


def check_cache_models(
    names: Sequence[str], option: str = "--cache", *, single: bool = False
) -> None:
    """Resolve every cache model name once, before any work is done. Raises
    :class:`regio.cache.types.CacheRuleError` for a name without a cache rule, naming
    ``option`` (the command-line option the names came from), the bad name, the closest
    known providers or models (``difflib``, at most three) and a value that works;
    ``single``: the option takes one ``provider:model`` (the message offers no list and no
    ``oracle``)."""
    for name in names:
        try:
            cache_model_for(name)
        except CacheRuleError as exc:
            told = _help(option, name, single)
            if told is None:
                raise CacheRuleError(f"{option} {name}: {exc}") from None
            raise CacheRuleError(told) from None
