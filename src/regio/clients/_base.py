"""The provider protocol and the helpers every adapter shares.

A provider turns a rendered payload (the second value of
:meth:`regio.engine.Engine.request`) into a :class:`regio.providers.completion.Completion`. It names
the wire ``api`` whose renderer the engine must use (``"openai"`` for Chat Completions,
``"anthropic"`` for the Messages API) and the ``model`` it asks for.

The SDKs are optional (extra ``providers``); :func:`require_sdk` imports one lazily and raises
:class:`regio.errors.ProviderNotInstalledError` naming ``pip install regio[providers]``
when it is absent.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

import attrs

from regio.errors import ProviderNotInstalledError
from regio.providers.completion import Completion

__all__ = [
    "ProviderAdapter",
    "context_window_field",
    "create_kwargs",
    "require_sdk",
    "sdk_client",
    "to_dict",
]


@runtime_checkable
class ProviderAdapter(Protocol):
    """What the agent loop needs from a provider.

    * ``api``: ``"openai"`` or ``"anthropic"``: the payload format it accepts;
    * ``model``: the model name sent with every request;
    * ``complete(payload)`` / ``acomplete(payload)``: one call; provider refusals are raised
      as the SDK's own exception (or :class:`regio.agent.errors.ProviderHTTPError`), never
      swallowed, so the loop can hand a context-length refusal to
      :meth:`regio.engine.Engine.recover_overflow`.
    """

    api: str
    model: str

    def complete(self, payload: dict[str, Any]) -> Completion:
        """Send one request and return the answer."""
        ...

    async def acomplete(self, payload: dict[str, Any]) -> Completion:
        """Async twin of :meth:`complete`."""
        ...


class HoldsSdkClient(Protocol):
    """A provider that builds its SDK client on first use (:func:`sdk_client`): the client
    lives in one of its attributes (``client`` / ``async_client``, ``None`` until built) and
    ``_client_kwargs()`` gives the client constructor's keyword arguments."""

    def _client_kwargs(self) -> dict[str, Any]: ...


def require_sdk(module: str) -> ModuleType:
    """Import the SDK ``module`` (``"openai"`` or ``"anthropic"``).

    Raises :class:`ProviderNotInstalledError` with the install command when it is missing.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ProviderNotInstalledError(
            f"the {module!r} package is needed for this provider but is not installed; "
            "install the optional extra with: pip install regio[providers]"
        ) from exc


def sdk_client(provider: HoldsSdkClient, slot: str, module: str, class_name: str) -> Any:
    """The SDK client held in ``provider.<slot>`` (``"client"`` / ``"async_client"``),
    built on first use as ``<module>.<class_name>(**provider._client_kwargs())`` (e.g.
    ``"anthropic"``, ``"AsyncAnthropic"``) and kept there.

    Raises :class:`ProviderNotInstalledError` when ``module`` is missing.
    """
    client = getattr(provider, slot)
    if client is None:
        client = getattr(require_sdk(module), class_name)(**provider._client_kwargs())
        setattr(provider, slot, client)
    return client


def create_kwargs(
    body: dict[str, Any], create: Callable[..., Any], extra_body: dict[str, Any]
) -> dict[str, Any]:
    """Split a request ``body`` into keyword arguments for the SDK's ``create``: keys its
    signature names travel as themselves, every other key (plus ``extra_body`` and the body's
    own ``extra_body``) travels in ``extra_body`` (omitted when empty). ``body`` is consumed."""
    known = set(inspect.signature(create).parameters)
    extra = dict(extra_body)
    extra.update(body.pop("extra_body", None) or {})
    kwargs: dict[str, Any] = {}
    for key, value in body.items():
        if key in known:
            kwargs[key] = value
        else:
            extra[key] = value
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


def to_dict(obj: object) -> dict[str, Any]:
    """A JSON-able dict of an SDK response object (pydantic ``model_dump``) or a dict."""
    if isinstance(obj, dict):
        return obj
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        out = dump(mode="json", exclude_none=False)
        if isinstance(out, dict):
            return out
    to_json = getattr(obj, "to_dict", None)
    if callable(to_json):
        out = to_json()
        if isinstance(out, dict):
            return out
    raise TypeError(f"cannot read a provider response of type {type(obj).__name__}")


def _check_window(instance: object, attribute: attrs.Attribute[int | None], value: object) -> None:
    from regio.session._declared import check_context_window

    check_context_window(value, f"{type(instance).__name__}({attribute.name}=...)")


def context_window_field() -> Any:
    """An ``attrs`` field for a provider's declared ``context_window`` (tokens, ``None``:
    unknown); anything but ``None`` or a positive integer raises
    :class:`regio.errors.ContextWindowError` naming the provider. The agent loop reads
    it into the engine (:func:`regio.session._declared.adopt_context_window`)."""
    return attrs.field(default=None, validator=_check_window, kw_only=True)
