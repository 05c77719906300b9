"""The registry of providers by name: the one place regio looks a provider up.

:func:`register_provider` adds a :class:`regio.providers.Provider` (and registers its renderer
and chat format by name where none is, so ``api=`` and saved token counters find them);
:func:`provider_for` / :func:`find_provider` look one up by name or alias; :func:`providers`
lists them in registration order. :func:`usage_parser_for` and :func:`response_reader_for`
find the registered part that recognizes a usage report or a response, for callers that are
given one without its provider (``Engine.observe``, ``Engine.add_response``).

The built-in providers register when :mod:`regio.providers` is imported (any import of this
module imports the package first).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from regio.errors import RegioError
from regio.layout.render.registry import register_renderer, renderers
from regio.tokens.overhead import register_chat_format
from regio.tokens.registry import chat_format_for_model
from regio.tokens.tooldefs import NEUTRAL_FRAMING, ToolFraming

from .base import Provider, ResponseReader, UsageParser

__all__ = [
    "DEFAULT_PROVIDER",
    "UnknownProviderError",
    "chat_format_for",
    "find_provider",
    "provider_for",
    "providers",
    "register_provider",
    "response_reader_for",
    "response_readers",
    "tool_framing_for",
    "usage_parser_for",
    "usage_parsers",
]

#: The provider an engine lays out for when none is named (``EngineOptions.provider``), and
#: whose rules give the layout's defaults: Anthropic's Messages API, the one whose cache rules
#: regio was first measured on.
DEFAULT_PROVIDER = "anthropic"

_REGISTRY: dict[str, Provider] = {}


class UnknownProviderError(RegioError, KeyError):
    """A provider name no registration knows; the message lists the registered ones. Also a
    :class:`KeyError`, which it was before."""

    def __str__(self) -> str:  # a KeyError's str() is the repr of its argument
        return str(self.args[0]) if self.args else ""


def register_provider(provider: Provider) -> Provider:
    """Register ``provider`` under its ``name`` (a later registration of the name replaces
    it) and return it. Its renderer is registered under its API when no renderer is, and its
    chat format under its name when no format is (a different format under a known name
    raises ``ValueError``). Raises ``TypeError`` for anything but a :class:`Provider`."""
    if not isinstance(provider, Provider):
        raise TypeError(
            f"register_provider: expected a regio.providers.Provider, got a "
            f"{type(provider).__name__}"
        )
    register_chat_format(provider.chat_overhead)
    if provider.renderer.api not in renderers():
        register_renderer(provider.renderer)
    _REGISTRY[provider.name] = provider
    return provider


def providers() -> tuple[Provider, ...]:
    """Every registered provider, in registration order."""
    return tuple(_REGISTRY.values())


def find_provider(name: str | None) -> Provider | None:
    """The provider registered as ``name`` (case-insensitive), else the one with ``name``
    among its aliases, else ``None``."""
    if not name:
        return None
    key = name.strip().lower()
    found = _REGISTRY.get(key)
    if found is not None:
        return found
    for provider in reversed(_REGISTRY.values()):  # the latest registration wins
        if key in provider.aliases:
            return provider
    return None


def provider_for(name: str) -> Provider:
    """The provider ``name`` (:func:`find_provider`). Raises :class:`UnknownProviderError`
    naming the registered providers."""
    found = find_provider(name)
    if found is None:
        raise UnknownProviderError(
            f"unknown provider {name!r}; registered: {', '.join(_REGISTRY)} (register one "
            "with regio.providers.register_provider)"
        )
    return found


def chat_format_for(provider: str | None, model: str) -> str:
    """The chat format a token counter for ``provider`` / ``model`` uses: the registered
    provider's ``chat_overhead.name``, else the one the model name implies
    (:func:`regio.tokens.chat_format_for_model`)."""
    found = find_provider(provider)
    return found.chat_overhead.name if found is not None else chat_format_for_model(model)


def tool_framing_for(provider: str | None) -> ToolFraming:
    """The tool framing of ``provider`` (registered), else
    :data:`regio.tokens.tooldefs.NEUTRAL_FRAMING` (the definitions only)."""
    found = find_provider(provider)
    return found.tool_framing if found is not None else NEUTRAL_FRAMING


def _distinct(parts: list[Any]) -> tuple[Any, ...]:
    out: list[Any] = []
    for part in parts:
        if not any(part is seen for seen in out):
            out.append(part)
    return tuple(out)


def usage_parsers() -> tuple[UsageParser, ...]:
    """The registered providers' usage parsers, each once, in registration order."""
    return _distinct([p.usage for p in _REGISTRY.values()])


def response_readers() -> tuple[ResponseReader, ...]:
    """The registered providers' response readers, each once, in registration order."""
    return _distinct([p.responses for p in _REGISTRY.values()])


def usage_parser_for(usage: object) -> UsageParser | None:
    """The registered usage parser that recognizes ``usage`` (``None``: none does)."""
    for parser in usage_parsers():
        if parser.recognizes(usage):
            return parser
    return None


def response_reader_for(data: Mapping[str, Any]) -> ResponseReader | None:
    """The registered response reader that recognizes the response dict ``data`` (``None``:
    none does)."""
    for reader in response_readers():
        if reader.recognizes(data):
            return reader
    return None
