"""The plain-text completion provider (``text``): ``POST /v1/completions`` or llama.cpp
``/completion``, one prompt string (:mod:`regio.layout.render.text`).

The prompt carries no tool definitions, so they cost nothing (:data:`UNSENT_FRAMING`); its
counters keep the ``openai_chat`` chat format and its usage and responses are read as Chat
Completions' (completion endpoints report ``prompt_tokens`` and answer in ``choices``). No cache
rule describes it.
"""

from __future__ import annotations

from regio.layout.render.text import TEXT as TEXT_RENDERER
from regio.tokens.overhead import CHAT_FORMATS
from regio.tokens.tooldefs import UNSENT_FRAMING

from .base import Provider
from .openai import CHAT_RESPONSES, CHAT_USAGE
from .registry import register_provider

__all__ = ["TEXT"]

TEXT = register_provider(
    Provider(
        name="text",
        renderer=TEXT_RENDERER,
        tool_framing=UNSENT_FRAMING,
        chat_overhead=CHAT_FORMATS["openai_chat"],
        usage=CHAT_USAGE,
        responses=CHAT_RESPONSES,
        cache_rule=None,
        default_model="any",
    )
)
