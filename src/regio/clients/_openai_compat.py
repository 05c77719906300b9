"""OpenAI Chat Completions provider: OpenAI itself, vLLM, llama.cpp server (via ``base_url``).

Uses the official ``openai`` SDK (optional extra ``providers``), imported on first use.
The payload is the engine's rendered Chat Completions request (``messages``, ``tools``, ...);
the provider adds ``model`` and its own sampling defaults (``max_tokens``, ``temperature``)
where the payload does not set them. Keys the SDK's ``create`` does not know (llama.cpp's
``cache_prompt``, ``id_slot``, ``n_probs``, ...) travel in ``extra_body``.

``prompt_cache_key`` (OpenAI's cache-routing key,
https://platform.openai.com/docs/guides/prompt-caching) is sent only to
OpenAI itself (no ``base_url``, or a host under ``openai.com``): other servers may reject an
unknown field, and it has no meaning for them.

Refusals are raised as the SDK's exceptions (``openai.BadRequestError`` with ``status_code``
and ``body``), which :func:`regio.providers.overflow.classify_overflow` recognises for
``context_length_exceeded`` and llama.cpp's ``exceed_context_size_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

import attrs

from regio.providers.completion import Completion
from regio.providers.wire import openai_chat_completion

from ._base import context_window_field, create_kwargs, sdk_client, to_dict

__all__ = ["OpenAICompatibleProvider", "is_openai_host"]


def is_openai_host(base_url: str | None) -> bool:
    """True for OpenAI's own API: no ``base_url`` or a host that is ``openai.com`` or under it."""
    if not base_url:
        return True
    host = (urlparse(base_url).hostname or "").lower()
    return host == "openai.com" or host.endswith(".openai.com")


@attrs.define
class OpenAICompatibleProvider:
    """Chat Completions over the ``openai`` SDK.

    * ``model``: model name (llama.cpp accepts any name);
    * ``base_url``: e.g. ``http://127.0.0.1:18080/v1`` for a llama.cpp server; ``None`` for
      OpenAI;
    * ``api_key``: defaults to ``$OPENAI_API_KEY`` for OpenAI and to ``"sk-no-key"`` for other
      servers (llama.cpp and vLLM accept any key unless started with one);
    * ``max_tokens`` / ``temperature``: sent unless the payload sets them (``max_tokens`` is
      also skipped when the payload has ``max_completion_tokens``; ``None``: omitted);
    * ``extra_body``: extra JSON fields for every request (e.g. ``{"cache_prompt": True}``);
    * ``timeout`` (seconds) and ``max_retries`` are passed to the SDK client;
    * ``client`` / ``async_client``: ready SDK clients (tests, custom transports);
    * ``api``: the engine's provider name, which picks the renderer and the calibration key
      (default ``openai`` for OpenAI itself, else ``openai_compatible``; ``llamacpp`` and
      ``vllm`` work too);
    * ``context_window``: the model's context window in tokens when known (``None``; for a
      llama.cpp server :meth:`regio.agent.llamacpp.LlamaCppServer.context_window` reads its
      ``n_ctx``); the agent loop reads it into the engine
      (:func:`regio.session._declared.adopt_context_window`).

    Raises :class:`regio.errors.ProviderNotInstalledError` on first use when ``openai``
    is not installed.
    """

    model: str
    base_url: str | None = None
    api_key: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    extra_body: dict[str, Any] = attrs.field(factory=dict)
    timeout: float = 600.0
    max_retries: int = 2
    client: Any = None
    async_client: Any = None
    api: str = attrs.field(
        default=attrs.Factory(
            lambda self: "openai" if is_openai_host(self.base_url) else "openai_compatible",
            takes_self=True,
        )
    )
    context_window: int | None = context_window_field()

    @property
    def sends_prompt_cache_key(self) -> bool:
        """Whether ``prompt_cache_key`` is forwarded (only to OpenAI itself)."""
        return is_openai_host(self.base_url)

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"timeout": self.timeout, "max_retries": self.max_retries}
        if self.base_url:
            kwargs["base_url"] = self.base_url
        key = self.api_key
        if key is None and not is_openai_host(self.base_url):
            key = "sk-no-key"
        if key is not None:
            kwargs["api_key"] = key
        return kwargs

    def _sync_client(self) -> Any:
        return sdk_client(self, "client", "openai", "OpenAI")

    def _async_client(self) -> Any:
        return sdk_client(self, "async_client", "openai", "AsyncOpenAI")

    def request_kwargs(self, payload: dict[str, Any], create: Callable[..., Any]) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create``: the payload plus ``model``,
        sampling defaults and ``extra_body``; unknown keys move into ``extra_body``."""
        body = dict(payload)
        body.setdefault("model", self.model)
        if self.max_tokens is not None and not {"max_tokens", "max_completion_tokens"} & set(body):
            body["max_tokens"] = self.max_tokens
        if self.temperature is not None:
            body.setdefault("temperature", self.temperature)
        if not self.sends_prompt_cache_key:
            body.pop("prompt_cache_key", None)
        return create_kwargs(body, create, self.extra_body)

    def complete(self, payload: dict[str, Any]) -> Completion:
        """One Chat Completions call; SDK exceptions propagate unchanged."""
        create = self._sync_client().chat.completions.create
        response = create(**self.request_kwargs(payload, create))
        return openai_chat_completion(to_dict(response))

    async def acomplete(self, payload: dict[str, Any]) -> Completion:
        """Async twin of :meth:`complete`."""
        create = self._async_client().chat.completions.create
        response = await create(**self.request_kwargs(payload, create))
        return openai_chat_completion(to_dict(response))
