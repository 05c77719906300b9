"""Events of the agent loop (subclasses of :class:`regio.events.Event`).

Emitted on the loop's bus (the engine's bus when it has one), in this order per step:
``step_started`` before the request is sent, ``step_completed`` after the assistant turn is
recorded and its tool calls answered; ``run_finished`` once at the end. Token fields are in
tokens, ``cost_usd`` in USD, ``prompt_ms`` in milliseconds.
"""

from __future__ import annotations

from regio.events import Event

from .types import StepRecord

__all__ = ["RunFinished", "StepCompleted", "StepStarted"]


class StepStarted(Event, frozen=True, tag="step_started"):
    """Step ``step`` is about to call the provider with a request the engine counts at
    ``estimated_prompt_tokens``; the window holds ``window_used`` of ``window_budget``."""

    step: int
    estimated_prompt_tokens: int
    window_used: int
    window_budget: int


class StepCompleted(Event, StepRecord, frozen=True, tag="step_completed"):
    """Step ``step`` finished; its fields are those of :class:`regio.agent.types.StepRecord`
    (one definition), in the same order.

    ``prompt_tokens`` / ``cached_tokens`` / ``cache_write_tokens`` / ``output_tokens`` as the
    provider reported them; ``predicted_cached_tokens`` what the attached cache predictor
    computed (``None`` without one); ``tool_calls`` the tool names called; ``overflow_retries``
    the context-overflow recoveries this step needed.
    """


class RunFinished(Event, frozen=True, tag="run_finished"):
    """The run stopped for ``stop_reason`` after ``steps`` steps."""

    stop_reason: str
    steps: int
    prompt_tokens: int
    cached_tokens: int
