"""A request rendered without the render log, for any renderer API: what a payload the
session's kept state helped render must equal."""

from __future__ import annotations

from typing import Any

from regio.layout.render.anthropic import render_anthropic
from regio.layout.render.openai import render_openai_chat, render_openai_responses

#: The renderer APIs whose renderers keep a prefix in the session's render log.
PREFIX_APIS = ("anthropic", "openai_chat", "openai_responses")


def whole_render(request: Any, payload: dict[str, Any], api: str) -> dict[str, Any]:
    """``request`` rendered for ``api`` without the render log, with ``payload``'s model and
    output limit."""
    model = payload["model"]
    if api == "openai_chat":
        limit = payload.get("max_completion_tokens")
        return render_openai_chat(request, model=model, max_tokens=limit)
    if api == "openai_responses":
        limit = payload.get("max_output_tokens")
        return render_openai_responses(request, model=model, max_tokens=limit)
    return render_anthropic(request, model=model, max_tokens=payload["max_tokens"])
