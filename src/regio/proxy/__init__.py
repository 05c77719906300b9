"""``regio proxy``: regio's window in front of agents you don't own (extra ``regio[proxy]``).

An HTTP server that speaks the Anthropic Messages API (``POST /v1/messages``), the OpenAI Chat
Completions API (``POST /v1/chat/completions``) and the OpenAI Responses API
(``POST /v1/responses``) to its clients and the same API to one upstream, streaming and not.
Each request joins a session (the ``x-regio-session`` header, else the session whose history it
extends); only what is new is admitted into the session's engine, the blueprint lays out the
window, and the upstream's answer comes back unchanged. Usage: docs/proxy.md. ::

    from regio.proxy import ProxyConfig, create_app

    app = create_app(ProxyConfig("agent.yaml", "https://api.anthropic.com"))  # any ASGI server

Modules, one concept each: :mod:`~regio.proxy.dialects` (the client's request),
:mod:`~regio.proxy.history` (digests and prefixes), :mod:`~regio.proxy.readers` (items into
messages; the blueprint's captures are applied with :class:`regio.capture.LiveCapture`),
:mod:`~regio.proxy.payloads` (the upstream body), :mod:`~regio.proxy.sessions` (finding and
opening sessions), :mod:`~regio.proxy.turn` (one request's engine work),
:mod:`~regio.proxy.restore` (regio's own tools), :mod:`~regio.proxy.streams` and
:mod:`~regio.proxy.sse` (relaying events), :mod:`~regio.proxy.records` (what the proxy stores;
each request holds its session's lease in the engine store, :mod:`regio.persistence.store.lease`),
:mod:`~regio.proxy.accounting`, :mod:`~regio.proxy.metrics`,
:mod:`~regio.proxy.status`, :mod:`~regio.proxy.state` (a worker's state; the blocking steps,
grouped into trips to a worker thread), :mod:`~regio.proxy.forward` and :mod:`~regio.proxy.app`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Public name -> module (imported on first use: ``regio proxy --help`` and the CLI's
#: registration need none of the server's packages).
_EXPORTS = {
    "DEFAULT_STORE": "regio.proxy.config",
    "ClientRequestError": "regio.proxy.errors",
    "PassThrough": "regio.proxy.errors",
    "ProxyConfig": "regio.proxy.config",
    "ProxyConfigError": "regio.proxy.errors",
    "ProxyError": "regio.proxy.errors",
    "create_app": "regio.proxy.app",
    "serve": "regio.proxy.app",
}

if TYPE_CHECKING:
    from .app import create_app, serve
    from .config import DEFAULT_STORE, ProxyConfig
    from .errors import ClientRequestError, PassThrough, ProxyConfigError, ProxyError

__all__ = [
    "DEFAULT_STORE",
    "ClientRequestError",
    "PassThrough",
    "ProxyConfig",
    "ProxyConfigError",
    "ProxyError",
    "create_app",
    "serve",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'regio.proxy' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
