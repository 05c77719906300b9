"""Adapters that put a regio :class:`regio.engine.Engine` inside existing agent frameworks.

Each imports its framework lazily and is an optional extra:

* :mod:`regio.adapters.langchain`: ``RegioMiddleware``, a LangChain v1 agent middleware
  (``regio[langchain]``);
* :mod:`regio.adapters.pydantic_ai`: ``RegioCapability`` (a pydantic-ai capability) and
  ``RegioHistory`` (a history processor) (``regio[pydantic-ai]``);
* :mod:`regio.adapters.openai_agents`: ``RegioSession``, an OpenAI Agents SDK ``Session`` with
  its per-call window filter (``regio[openai-agents]``);
* :mod:`regio.adapters.litellm`: ``completion``, ``litellm.completion`` on regio's payload
  (``regio[litellm]``);
* :mod:`regio.adapters.google_adk`: ``RegioCallbacks``, Google ADK model callbacks
  (``regio[google-adk]``).

Where an adapter is in its framework's history lives in the engine's session
(:mod:`regio.adapters.cursor`), so a new adapter over a loaded engine continues the session.
Every adapter lays the window out through :func:`regio.adapters.repaired.repaired_request`: a
broken history (an orphaned call or result, a reused call id) is repaired before the model gets
it.

Importing any adapter sets ``LITELLM_LOCAL_MODEL_COST_MAP=True`` when it is unset, so a later
``import litellm`` (the OpenAI Agents SDK's LiteLLM model among others) reads the price map
installed with LiteLLM instead of downloading it (:mod:`regio.adapters.litellm`).
"""

from __future__ import annotations

import os

__all__: list[str] = []

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
