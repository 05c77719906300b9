"""The agent loop and provider adapters.

* :class:`AgentLoop` runs an agent through a :class:`regio.engine.Engine` and a provider
  (``run(task)`` / ``arun(task)``) and returns a :class:`RunResult`;
* :class:`Tool` declares a user tool (name, description, JSON Schema, callable);
* providers: :class:`OpenAICompatibleProvider` (OpenAI, vLLM, llama.cpp server),
  :class:`AnthropicProvider`, :class:`ReplayProvider`, :class:`ScriptedProvider` (SDKs are the
  optional extra ``providers``, imported lazily);
* :class:`LlamaCppServer` / :class:`LlamaCppSlotPredictor`: exact prompt tokens from a
  llama.cpp server and the slot-model prediction of its ``cache_n``.
"""

from __future__ import annotations

from .errors import (
    AgentConfigError,
    ProviderHTTPError,
    ProviderNotInstalledError,
    ProviderResponseError,
    ReplayExhaustedError,
    ScriptExhaustedError,
)
from .events import RunFinished, StepCompleted, StepStarted
from .llamacpp import LlamaCppServer, LlamaCppSlotPredictor, server_root
from .loop import STOP_REASONS, AgentLoop, assistant_text
from .predict import CachePredictor
from .providers import (
    AnthropicProvider,
    OpenAICompatibleProvider,
    ProviderAdapter,
    ReplayProvider,
    ScriptedProvider,
    reply,
)
from .tools import Tool, UserToolOutcome
from .types import Completion, LoopPricing, ProviderUsage, RunResult, RunTotals, StepRecord

__all__ = [
    "STOP_REASONS",
    "AgentConfigError",
    "AgentLoop",
    "AnthropicProvider",
    "CachePredictor",
    "Completion",
    "LlamaCppServer",
    "LlamaCppSlotPredictor",
    "LoopPricing",
    "OpenAICompatibleProvider",
    "ProviderAdapter",
    "ProviderHTTPError",
    "ProviderNotInstalledError",
    "ProviderResponseError",
    "ProviderUsage",
    "ReplayExhaustedError",
    "ReplayProvider",
    "RunFinished",
    "RunResult",
    "RunTotals",
    "ScriptExhaustedError",
    "ScriptedProvider",
    "StepCompleted",
    "StepRecord",
    "StepStarted",
    "Tool",
    "UserToolOutcome",
    "assistant_text",
    "reply",
    "server_root",
]
