"""The seam where the engine renders a laid-out request: the provider registry
(:mod:`regio.providers.registry`) gives the provider's renderer, or the renderer registry
(:mod:`regio.layout.render.registry`) the one of an ``api`` asked for by name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from regio.layout import Renderer, Request, renderer_for, renderers
from regio.providers.registry import find_provider, providers

if TYPE_CHECKING:
    from regio.layout import RenderLog

__all__ = ["APIS", "api_for", "render_payload", "renderer_of"]

#: Renderer names (the registered APIs).
APIS: tuple[str, ...] = renderers()


def renderer_of(provider: str, api: str | None = None) -> Renderer:
    """The renderer of ``api`` when given (a registered API), else ``provider``'s. Raises
    ``ValueError`` naming the registered providers and APIs."""
    found = find_provider(provider)
    if api is None and found is not None:
        return found.renderer
    if api is not None and api in renderers():
        return renderer_for(api)
    raise ValueError(
        f"no renderer for provider {provider!r} (api {api!r}); providers: "
        f"{', '.join(p.name for p in providers())}; or pass api= one of {', '.join(renderers())}"
    )


def api_for(provider: str, api: str | None = None) -> str:
    """The API name the request of ``provider`` renders for (``api`` when given); see
    :func:`renderer_of` for the errors."""
    return renderer_of(provider, api).api


def render_payload(
    request: Request,
    provider: str,
    *,
    api: str | None = None,
    model: str = "",
    max_tokens: int | None = None,
    log: RenderLog | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The provider payload of ``request`` (``max_tokens``: the output reserve, tokens; the
    renderer's default when ``None``; ``log``: the session's :class:`regio.layout.RenderLog`).
    The payload is the caller's: it shares no container with the engine or another payload."""
    renderer = renderer_of(provider, api)
    return renderer.render(request, model=model, max_tokens=max_tokens, log=log, **extra)
