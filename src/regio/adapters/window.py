"""The context window a framework declares for its model, read into the engine
(:func:`regio.session._declared.adopt_context_window`: used when the engine has none, the
smaller with a warning when both are set and disagree).

* LangChain: a chat model's ``profile["max_input_tokens"]`` (langchain-core model profiles,
  https://docs.langchain.com/oss/python/langchain/models#model-profiles);
* LiteLLM: ``litellm.get_model_info(model)["max_input_tokens"]`` from the model map shipped
  with the installed package (never downloaded; an unmapped model declares none).

pydantic-ai and the OpenAI Agents SDK declare no context window for a model; their engines
keep the window they were built with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from regio.session._declared import adopt_context_window, check_context_window

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from regio.engine import Engine

__all__ = ["adopt_framework_window", "langchain_window", "litellm_window"]


def langchain_window(model: BaseChatModel) -> int | None:
    """``max_input_tokens`` of a LangChain chat model's ``profile`` (tokens), ``None`` when
    it has no profile or no such entry. Raises
    :class:`regio.errors.ContextWindowError` for a value that is not a positive
    integer."""
    profile = getattr(model, "profile", None)
    value = profile.get("max_input_tokens") if isinstance(profile, dict) else None
    name = type(model).__name__
    return check_context_window(value, f"LangChain {name}.profile['max_input_tokens']")


def litellm_window(model: str) -> int | None:
    """``max_input_tokens`` of ``model`` in LiteLLM's installed model map (tokens), ``None``
    for a model the map does not know. Raises
    :class:`regio.errors.ContextWindowError` for a value that is not a positive
    integer."""
    import litellm

    try:
        info = litellm.get_model_info(model)
    except Exception:  # LiteLLM raises its own errors for an unmapped model
        return None
    value = info.get("max_input_tokens") if isinstance(info, dict) else None
    return check_context_window(value, f"LiteLLM model map {model!r} max_input_tokens")


def adopt_framework_window(engine: Engine, declared: int | None, source: str) -> None:
    """:func:`regio.session._declared.adopt_context_window` when ``declared`` is known."""
    if declared is not None:
        adopt_context_window(engine, declared, source)
