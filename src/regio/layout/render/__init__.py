"""Renderers: a provider-neutral :class:`regio.layout.Request` turned into one API's payload.

Modules:

* :mod:`~regio.layout.render.registry` — the :class:`Renderer` protocol,
  :class:`FunctionRenderer` and the registry by API name (:func:`register_renderer`,
  :func:`renderer_for`, :func:`renderers`);
* :mod:`~regio.layout.render.anthropic` — Anthropic Messages (``anthropic``);
* :mod:`~regio.layout.render.openai` — OpenAI Chat Completions and Responses
  (``openai_chat``, ``openai_responses``);
* :mod:`~regio.layout.render.text` — one plain-text prompt (``text``);
* :mod:`~regio.layout.render.common` — what the renderers share: messages grouped by role,
  cache-marker placement, the continuation text;
* :mod:`~regio.layout.render.media` — images and documents in each API's shape.

The built-in renderers register themselves when their module is imported (:mod:`regio.layout`
imports them); a new API is one module with a renderer passed to :func:`register_renderer`
(docs/architecture.md, "A new renderer: one file").
"""

from regio.layout.render.registry import (
    FunctionRenderer,
    Renderer,
    register_renderer,
    renderer_for,
    renderers,
)

__all__ = ["FunctionRenderer", "Renderer", "register_renderer", "renderer_for", "renderers"]
