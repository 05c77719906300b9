"""Cache predictors: what a cache simulator says a request will read, beside what the provider
reports.

A :class:`CachePredictor` is attached to an :class:`regio.agent.AgentLoop`; after each provider
call the loop asks it for the predicted cached tokens of that request (the prediction never
looks at the provider's reported figure; it runs after the call only because
output-persisting caches such as llama.cpp's slot keep the generated tokens, so the
simulator must learn them before the next request).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from .types import Completion

if TYPE_CHECKING:
    from regio.layout.model import Request

__all__ = ["CacheModelPredictor", "CachePredictor"]


@runtime_checkable
class CachePredictor(Protocol):
    """``predict(request, payload, completion) -> int | None``: the predicted cached prompt
    tokens (``None``: no prediction) of the request the engine assembled (``request``, a
    :class:`regio.layout.Request`) and rendered (``payload``), given the provider's answer."""

    def predict(
        self, request: Request, payload: dict[str, Any], completion: Completion
    ) -> int | None:
        """Predicted cached tokens of this request (tokens)."""
        ...


@attrs.define
class CacheModelPredictor:
    """Predicts with any :class:`regio.cache.CacheModel` from the layout's blocks.

    Each request becomes a ``CacheRequest`` through :func:`regio.layout.to_cache_request`
    (block digests, planned breakpoints; no token ids, so prefixes match in whole blocks).
    ``clock`` gives the simulated start time in seconds (default: one second per request);
    ``outcomes`` keeps every :class:`regio.cache.CacheOutcome`.
    """

    model: Any
    scope: str = "default"
    clock: Callable[[int], float] = float
    outcomes: list[Any] = attrs.field(factory=list)

    @classmethod
    def named(cls, name: str, **options: Any) -> CacheModelPredictor:
        """A predictor over ``regio.providers.cache_model_for(name)`` (e.g.
        ``"anthropic:claude-sonnet-4-6"``, ``"openai:gpt-5"``, ``"llamacpp"``). Raises
        :class:`regio.cache.CacheRuleError` for an unknown name."""
        from regio.providers import cache_model_for

        return cls(cache_model_for(name, **options))

    def predict(
        self, request: Request, payload: dict[str, Any], completion: Completion
    ) -> int | None:
        """Predicted cached tokens (the model's ``read``) of ``request``."""
        from regio.layout.cachebridge import to_cache_request

        index = len(self.outcomes)
        cache_request = to_cache_request(
            request,
            t_start=self.clock(index),
            id=f"r{index:06d}",
            model=completion.model,
            scope=self.scope,
            output_tokens=completion.usage.output_tokens,
        )
        outcome = self.model.process(cache_request)
        self.outcomes.append(outcome)
        return int(outcome.read)
