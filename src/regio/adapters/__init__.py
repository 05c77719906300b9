"""Adapters that put a regio :class:`regio.runtime.Engine` inside existing agent frameworks.

Each imports its framework lazily and is an optional extra:

* :mod:`regio.adapters.langchain`: ``RegioMiddleware``, a LangChain v1 agent middleware
  (``regio[langchain]``);
* :mod:`regio.adapters.pydantic_ai`: ``RegioHistory``, a pydantic-ai history processor
  (``regio[pydantic-ai]``);
* :mod:`regio.adapters.openai_agents`: ``RegioSession``, an OpenAI Agents SDK ``Session``
  (``regio[openai-agents]``);
* :mod:`regio.adapters.litellm`: ``completion``, ``litellm.completion`` on regio's payload
  (``regio[litellm]``).

One adapter object per conversation: it owns the engine of that session.
"""

from __future__ import annotations

__all__: list[str] = []
