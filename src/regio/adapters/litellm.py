"""LiteLLM on regio's payload (extra ``regio[litellm]``).

:func:`completion` lays out the engine's window as a Chat Completions payload, sends it with
``litellm.completion(**payload)`` (any provider LiteLLM routes to,
https://docs.litellm.ai/docs/completion/input) and records the reply and its usage in the
engine. LiteLLM's model-price map is read from the installed package, never downloaded
(``LITELLM_LOCAL_MODEL_COST_MAP``).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["completion", "payload"]

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def payload(engine: Any, *, model: str | None = None, tools: Any = ()) -> dict[str, Any]:
    """The engine's Chat Completions payload (``engine.request("openai", ...)``), with
    ``model`` (a LiteLLM model name such as ``anthropic/claude-sonnet-4-6``) when given."""
    body: dict[str, Any] = engine.request("openai", tools=tools)[1]
    if model:
        body["model"] = model
    return body


def completion(engine: Any, *, model: str | None = None, tools: Any = (), **kwargs: Any) -> Any:
    """``litellm.completion(**payload(engine), **kwargs)``, then the reply is appended to the
    engine (``add_response(..., observe=True)``); returns LiteLLM's ``ModelResponse``.
    ``kwargs`` go to LiteLLM (``mock_response=`` for tests, ``api_base=``, ...);
    ``drop_params`` defaults to true so OpenAI-only fields of the payload (``prompt_cache_key``)
    are dropped for providers that refuse them
    (https://docs.litellm.ai/docs/completion/drop_params). The model's ``max_input_tokens`` in
    LiteLLM's model map is read into the engine's context window
    (:mod:`regio.adapters.window`)."""
    import litellm

    from .window import adopt_framework_window, litellm_window

    if model:  # the model map's window, when it knows the model
        adopt_framework_window(engine, litellm_window(model), f"LiteLLM model map ({model})")
    kwargs.setdefault("drop_params", True)
    response = litellm.completion(**payload(engine, model=model, tools=tools), **kwargs)
    engine.add_response(response, observe=True)
    return response
