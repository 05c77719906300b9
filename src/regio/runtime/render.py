"""The seam where the engine renders a laid-out request: the provider table picks the API, the
renderer registry renders it (:mod:`regio.layout.renderers`)."""

from __future__ import annotations

from typing import Any

from regio.layout import Request, renderer_for, renderers
from regio.providers import PROVIDERS

__all__ = ["APIS", "API_OF_PROVIDER", "api_for", "render_payload"]

#: Renderer names (the registered APIs).
APIS: tuple[str, ...] = renderers()

#: The API each provider speaks by default (from :data:`regio.providers.PROVIDERS`).
API_OF_PROVIDER: dict[str, str] = {name: p.api for name, p in PROVIDERS.items()}


def api_for(provider: str, api: str | None = None) -> str:
    """The renderer for ``provider`` (or ``api`` when given). Raises ``ValueError`` naming the
    known providers and APIs."""
    chosen = api or API_OF_PROVIDER.get(provider)
    if chosen not in renderers():
        raise ValueError(
            f"no renderer for provider {provider!r} (api {api!r}); providers: "
            f"{', '.join(API_OF_PROVIDER)}; or pass api= one of {', '.join(renderers())}"
        )
    return chosen


def render_payload(
    request: Request,
    provider: str,
    *,
    api: str | None = None,
    model: str = "",
    max_tokens: int | None = None,
    log: Any = None,
    **extra: Any,
) -> dict[str, Any]:
    """The provider payload of ``request`` (``max_tokens``: the output reserve, tokens; the
    renderer's default when ``None``; ``log``: the session's :class:`regio.layout.RenderLog`).
    The payload is the caller's: it shares no container with the engine or another payload."""
    renderer = renderer_for(api_for(provider, api))
    return renderer.render(request, model=model, max_tokens=max_tokens, log=log, **extra)
