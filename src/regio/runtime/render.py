"""Choosing the renderer for a provider and rendering a laid-out request."""

from __future__ import annotations

from typing import Any

from regio.layout import (
    Request,
    render_anthropic,
    render_openai_chat,
    render_openai_responses,
    render_text,
)

__all__ = ["APIS", "API_OF_PROVIDER", "api_for", "render_payload"]

#: Renderer names.
APIS: tuple[str, ...] = ("anthropic", "openai_chat", "openai_responses", "text")

#: The API each provider speaks by default (OpenAI-compatible servers use Chat Completions).
API_OF_PROVIDER: dict[str, str] = {
    "anthropic": "anthropic",
    "openai": "openai_chat",
    "openai_responses": "openai_responses",
    "openai_compatible": "openai_chat",
    "llamacpp": "openai_chat",
    "vllm": "openai_chat",
    "sglang": "openai_chat",
    "deepseek": "openai_chat",
    "google": "openai_chat",
    "text": "text",
}


def api_for(provider: str, api: str | None = None) -> str:
    """The renderer for ``provider`` (or ``api`` when given). Raises ``ValueError`` naming the
    known providers and APIs."""
    chosen = api or API_OF_PROVIDER.get(provider)
    if chosen not in APIS:
        raise ValueError(
            f"no renderer for provider {provider!r} (api {api!r}); providers: "
            f"{', '.join(API_OF_PROVIDER)}; or pass api= one of {', '.join(APIS)}"
        )
    return chosen


def render_payload(
    request: Request,
    provider: str,
    *,
    api: str | None = None,
    model: str = "",
    max_tokens: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The provider payload of ``request`` (``max_tokens`` is the output reserve, tokens)."""
    chosen = api_for(provider, api)
    if chosen == "anthropic":
        return render_anthropic(request, model=model, max_tokens=max_tokens or 1024, **extra)
    if chosen == "openai_chat":
        return render_openai_chat(request, model=model, max_tokens=max_tokens, **extra)
    if chosen == "openai_responses":
        return render_openai_responses(request, model=model, max_tokens=max_tokens, **extra)
    return render_text(request, model=model, max_tokens=max_tokens or 256)
