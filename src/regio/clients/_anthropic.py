"""Anthropic Messages API provider over the official ``anthropic`` SDK (extra ``providers``).

The payload is the engine's rendered Messages request (``system``, ``messages``, ``tools``
with planned ``cache_control`` breakpoints); the provider adds ``model`` and ``max_tokens``
(required by the API; default 1,024) where the payload does not set them. Keys the SDK's
``create`` does not know travel in ``extra_body``. A payload with ``context_management``
(server-side context editing, https://platform.claude.com/docs/en/build-with-claude/
context-editing) goes through ``client.beta.messages.create`` with the beta
``context-management-2025-06-27`` added to ``betas``, and ``compact-2026-01-12`` as well when
its edits hold the threshold compaction ``compact_20260112``
(https://platform.claude.com/docs/en/build-with-claude/compaction).

Usage: ``input_tokens`` is net of the cache, so the prompt is ``input_tokens +
cache_read_input_tokens + cache_creation_input_tokens`` (Anthropic prompt-caching docs,
https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching). Refusals are raised as
``anthropic.BadRequestError`` (``prompt is too long: N tokens > M maximum``), recognised by
:func:`regio.providers.overflow.classify_overflow`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from regio.layout.provider_compaction import ANTHROPIC_COMPACT_EDIT as COMPACT_EDIT
from regio.providers.completion import Completion
from regio.providers.wire import anthropic_completion

from ._base import context_window_field, create_kwargs, sdk_client, to_dict

if TYPE_CHECKING:
    from anthropic import Anthropic, AsyncAnthropic

__all__ = ["COMPACT_BETA", "AnthropicProvider"]

#: The beta header of Anthropic's threshold compaction.
COMPACT_BETA = "compact-2026-01-12"


@attrs.define
class AnthropicProvider:
    """Messages API over the ``anthropic`` SDK.

    * ``model``: e.g. ``claude-sonnet-4-6``;
    * ``max_tokens``: output cap sent unless the payload sets one (tokens, default 1,024);
    * ``temperature``: sent unless the payload sets it (``None``: omitted);
    * ``api_key`` (default ``$ANTHROPIC_API_KEY``), ``base_url``, ``timeout`` (seconds),
      ``max_retries``: passed to the SDK client;
    * ``extra_body``: extra JSON fields; ``client`` / ``async_client``: ready SDK clients;
    * ``context_window``: the model's context window in tokens when known (``None``); the
      agent loop reads it into the engine (:func:`regio.session._declared.adopt_context_window`).

    Raises :class:`regio.errors.ProviderNotInstalledError` on first use when
    ``anthropic`` is not installed.
    """

    model: str
    max_tokens: int = 1024
    temperature: float | None = None
    api_key: str | None = None
    base_url: str | None = None
    timeout: float = 600.0
    max_retries: int = 2
    extra_body: dict[str, Any] = attrs.field(factory=dict)
    client: Any = None
    async_client: Any = None
    api: str = "anthropic"
    context_window: int | None = context_window_field()

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"timeout": self.timeout, "max_retries": self.max_retries}
        if self.base_url:
            kwargs["base_url"] = self.base_url
        if self.api_key is not None:
            kwargs["api_key"] = self.api_key
        return kwargs

    def _sync_client(self) -> Any:
        return sdk_client(self, "client", "anthropic", "Anthropic")

    def _async_client(self) -> Any:
        return sdk_client(self, "async_client", "anthropic", "AsyncAnthropic")

    def request_kwargs(self, payload: dict[str, Any], create: Callable[..., Any]) -> dict[str, Any]:
        """Keyword arguments for ``messages.create``: the payload plus ``model``,
        ``max_tokens``, ``temperature`` and ``extra_body`` (unknown keys go there)."""
        body = dict(payload)
        body.setdefault("model", self.model)
        body.setdefault("max_tokens", self.max_tokens)
        if self.temperature is not None:
            body.setdefault("temperature", self.temperature)
        body.pop("prompt_cache_key", None)  # an OpenAI field; the Messages API has none
        return create_kwargs(body, create, self.extra_body)

    def _call(
        self, client: Anthropic | AsyncAnthropic, payload: dict[str, Any]
    ) -> tuple[Callable[..., Any], dict[str, Any]]:
        """(``create``, its keyword arguments): the beta endpoint with the context-management
        beta when the payload carries ``context_management`` (and the compaction beta when an
        edit is threshold compaction)."""
        create: Callable[..., Any]
        if "context_management" not in payload:
            create = client.messages.create
            return create, self.request_kwargs(payload, create)
        from regio.cache.context_editing import BETA

        create = client.beta.messages.create
        kwargs = self.request_kwargs(payload, create)
        edits = payload["context_management"].get("edits", ())
        betas = {*kwargs.get("betas", ()), BETA}
        if any(e.get("type") == COMPACT_EDIT for e in edits):
            betas.add(COMPACT_BETA)
        kwargs["betas"] = sorted(betas)
        return create, kwargs

    def complete(self, payload: dict[str, Any]) -> Completion:
        """One Messages call; SDK exceptions propagate unchanged."""
        create, kwargs = self._call(self._sync_client(), payload)
        return anthropic_completion(to_dict(create(**kwargs)))

    async def acomplete(self, payload: dict[str, Any]) -> Completion:
        """Async twin of :meth:`complete`."""
        create, kwargs = self._call(self._async_client(), payload)
        return anthropic_completion(to_dict(await create(**kwargs)))
