"""The context window a provider adapter declares, read into the engine.

A provider adapter (an agent provider such as
:class:`regio.agent.providers.OpenAICompatibleProvider` built with ``context_window=`` or from a
llama.cpp server's ``n_ctx``, a LangChain chat model's profile, LiteLLM's model map) may know
the model's context window. :func:`adopt_context_window` reconciles it with the engine's:

* the engine's window is not set (``EngineOptions.context_window`` is ``None``): the declared
  one is used;
* both are set and agree: nothing changes;
* both are set and disagree: the **smaller** is used (a window larger than the model's makes
  the provider refuse requests for length; a smaller one only compacts earlier). When the
  declared one is smaller, the engine's window shrinks to it with a ``UserWarning`` and the
  event ``context_window_adopted`` naming both and the source; when the engine's is smaller it
  is kept without a warning (a blueprint may budget less than the model allows on purpose).

A declared window that is not a positive integer is refused with
:class:`regio.errors.ContextWindowError` naming the adapter; ``None`` (unknown) is
ignored.
"""

from __future__ import annotations

import warnings
from typing import Any

import attrs

from regio.errors import ContextWindowError
from regio.events import Event

__all__ = [
    "ContextWindowAdopted",
    "adopt_context_window",
    "check_context_window",
    "declared_context_window",
]


class ContextWindowAdopted(Event, frozen=True, tag="context_window_adopted"):
    """The engine's context window changed to ``used`` tokens from what ``source`` declared
    (``declared`` tokens); ``engine_window`` is what the engine had (``None``: unset)."""

    engine_window: int | None
    declared: int
    used: int
    source: str


def check_context_window(value: object, where: str) -> int | None:
    """``value`` as a context window in tokens (``None``: unknown). Raises
    :class:`ContextWindowError` naming ``where`` for anything but ``None`` or a positive
    integer (a bool, a float, zero or a negative number)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ContextWindowError(
            f"{where}: the context window must be a positive integer of tokens (or None when "
            f"unknown), got {value!r}"
        )
    return value


def declared_context_window(adapter: object, where: str | None = None) -> int | None:
    """The context window ``adapter`` declares: its ``context_window`` attribute, or the value
    of its ``context_window()`` method; ``None`` when it declares none. Raises
    :class:`ContextWindowError` naming the adapter (``where``, default its class name) for a
    value that is not a positive integer."""
    value = getattr(adapter, "context_window", None)
    if callable(value):
        value = value()
    return check_context_window(value, where or f"{type(adapter).__name__}.context_window")


def adopt_context_window(engine: Any, declared: int | None, source: str) -> int | None:
    """Reconcile ``engine``'s context window with the one ``source`` declares (module doc);
    returns the window in use (tokens, ``None`` when neither is known). Raises
    :class:`ContextWindowError` naming ``source`` for a declared window that is not a positive
    integer."""
    declared = check_context_window(declared, source)
    current = engine.options.context_window
    if declared is None or declared == current:
        return current
    used = declared if current is None else min(current, declared)
    if used == current:
        return current  # the engine's window is already the smaller
    if current is not None:
        warnings.warn(
            f"{source} declares a context window of {declared} tokens but the engine has "
            f"{current}; using the smaller, {used}",
            UserWarning,
            stacklevel=2,
        )
    options = attrs.evolve(engine.options, context_window=used)
    engine.options = options  # an Engine hands them to its budget and its session
    engine.emit(ContextWindowAdopted(current, declared, used, source))
    return used
