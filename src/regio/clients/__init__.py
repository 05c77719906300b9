"""The provider SDK clients: adapters that send an engine's rendered payload through a
provider's official SDK and read the answer into a :class:`regio.providers.completion.Completion`.

They sit below the engine, which builds a blueprint's LLM summarizer
(:class:`regio.compaction._forking.ForkSummarizer`) on one of them, and below the agent loop,
which drives them (:mod:`regio.agent.providers` re-exports them next to its offline providers).
The SDKs are optional (extra ``providers``) and imported on first use; a missing one raises
:class:`regio.errors.ProviderNotInstalledError` naming ``pip install regio[providers]``.

Modules:

* ``_base`` -- :class:`ProviderAdapter` (what a provider offers: ``api``, ``model``,
  ``complete`` / ``acomplete``) and the helpers the SDK adapters share;
* ``_anthropic`` -- :class:`AnthropicProvider` (Messages API, ``anthropic`` SDK);
* ``_openai_compat`` -- :class:`OpenAICompatibleProvider` (Chat Completions, ``openai`` SDK:
  OpenAI, vLLM, SGLang, llama.cpp, Ollama, ...).
"""

from __future__ import annotations

from ._anthropic import COMPACT_BETA, AnthropicProvider
from ._base import ProviderAdapter, require_sdk
from ._openai_compat import OpenAICompatibleProvider, is_openai_host

__all__ = [
    "COMPACT_BETA",
    "AnthropicProvider",
    "OpenAICompatibleProvider",
    "ProviderAdapter",
    "is_openai_host",
    "require_sdk",
]
