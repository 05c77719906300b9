"""The renderer seam: one :class:`Renderer` protocol and the registry of renderers by API.

A renderer turns a provider-neutral :class:`regio.layout.Request` into one provider API's
payload (``render``) and checks a payload of that API (``check``: a list of problems, empty
when well formed). The built-in ones (``anthropic``, ``openai_chat``, ``openai_responses``,
``text``) register themselves when :mod:`regio.layout` is imported; a new API is one module
that defines a renderer and calls :func:`register_renderer` (docs/layout.md, "Adding a
renderer").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from ..model import Request
from ..repair import LayoutError

if TYPE_CHECKING:
    from ..renderlog import RenderLog

__all__ = ["FunctionRenderer", "Renderer", "register_renderer", "renderer_for", "renderers"]


class Renderer(Protocol):
    """Renders requests for one provider API.

    ``api``: the registry name; ``default_max_tokens``: the output reserve used when the
    caller gives none (tokens; ``None``: the field is left out).
    """

    @property
    def api(self) -> str:
        """The registry name."""
        ...

    @property
    def default_max_tokens(self) -> int | None:
        """The output reserve used when the caller gives none (tokens)."""
        ...

    def render(
        self,
        request: Request,
        *,
        model: str,
        max_tokens: int | None = None,
        log: RenderLog | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """The payload of ``request`` (``log``: the session's render log, optional; ``extra``
        keys are added as given). Raises :class:`LayoutError` for a payload that breaks the
        API's rules."""
        ...

    def check(self, payload: dict[str, Any]) -> list[str]:
        """Problems of ``payload`` under the API's rules (empty: well formed)."""
        ...


@attrs.frozen
class FunctionRenderer:
    """A :class:`Renderer` made of two functions (the built-in renderers are these).

    ``render_payload(request, *, model, max_tokens, log, **extra) -> payload`` and
    ``check_payload(payload) -> problems``; with a ``default_max_tokens``, a missing (or 0)
    ``max_tokens`` becomes it (tokens), else it is passed on as given.
    """

    api: str
    render_payload: Callable[..., dict[str, Any]]
    check_payload: Callable[[dict[str, Any]], list[str]]
    default_max_tokens: int | None = None

    def render(self, request: Request, *, model: str, **options: Any) -> dict[str, Any]:
        """``render_payload`` of ``request`` (``options``: ``max_tokens``, ``log`` and extra
        keys; see :meth:`Renderer.render`)."""
        max_tokens = options.pop("max_tokens", None)
        if self.default_max_tokens is not None:
            max_tokens = max_tokens or self.default_max_tokens
        return self.render_payload(request, model=model, max_tokens=max_tokens, **options)

    def check(self, payload: dict[str, Any]) -> list[str]:
        """``check_payload(payload)`` (see :meth:`Renderer.check`)."""
        return self.check_payload(payload)


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
