"""The renderer seam: one :class:`Renderer` protocol and the registry of renderers by API.

A renderer turns a provider-neutral :class:`regio.layout.Request` into one provider API's
payload (``render``) and checks a payload of that API (``check``: a list of problems, empty
when well formed). The built-in ones (``anthropic``, ``openai_chat``, ``openai_responses``,
``text``) register themselves when :mod:`regio.layout` is imported; a new API is one module
that defines a renderer and calls :func:`register_renderer` (docs/layout.md, "Adding a
renderer").
"""

from __future__ import annotations

from typing import Any, Protocol

from .model import Request
from .repair import LayoutError

__all__ = ["Renderer", "register_renderer", "renderer_for", "renderers"]


class Renderer(Protocol):
    """Renders requests for one provider API.

    ``api``: the registry name; ``default_max_tokens``: the output reserve used when the
    caller gives none (tokens; ``None``: the field is left out).
    """

    api: str
    default_max_tokens: int | None

    def render(
        self,
        request: Request,
        *,
        model: str,
        max_tokens: int | None = None,
        log: Any = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """The payload of ``request`` (``log``: the session's render log, optional; ``extra``
        keys are added as given). Raises :class:`LayoutError` for a payload that breaks the
        API's rules."""
        ...

    def check(self, payload: dict[str, Any]) -> list[str]:
        """Problems of ``payload`` under the API's rules (empty: well formed)."""
        ...


_REGISTRY: dict[str, Renderer] = {}


def register_renderer(renderer: Renderer) -> Renderer:
    """Register ``renderer`` under its ``api`` (a later registration replaces it)."""
    _REGISTRY[renderer.api] = renderer
    return renderer


def renderers() -> tuple[str, ...]:
    """The registered API names, in registration order."""
    return tuple(_REGISTRY)


def renderer_for(api: str) -> Renderer:
    """The renderer of ``api``. Raises :class:`LayoutError` naming the registered APIs."""
    found = _REGISTRY.get(api)
    if found is None:
        raise LayoutError(f"no renderer for api {api!r}; registered: {', '.join(_REGISTRY)}")
    return found
