"""The proxy's ASGI application (Starlette) and its server (uvicorn).

Routes: ``POST /v1/messages``, ``POST /v1/chat/completions``, ``POST /v1/responses`` (managed,
:mod:`regio.proxy.forward`); ``GET /metrics`` (Prometheus text, :mod:`regio.proxy.metrics`);
``GET /`` and ``GET /status.json`` (the status page, :mod:`regio.proxy.status`); every other
path and method goes upstream untouched (model lists, ``/v1/messages/count_tokens``, ...).

Why these libraries: Starlette (https://www.starlette.io) is a small ASGI toolkit whose
``StreamingResponse`` sends each chunk as it is produced, with client disconnects surfacing as
cancellation, which is what an event relay needs; uvicorn (https://www.uvicorn.org) is the
reference ASGI server, one event loop per process, so a worker serves hundreds of streams at
once while the engine's work runs in threads. Several workers are several processes sharing one
store (``--store redis://...``).
"""

from __future__ import annotations

import contextlib
import gc
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .config import ProxyConfig
from .dialects import API_PATHS
from .errors import PassThrough
from .forward import passthrough, serve_api
from .metrics import CONTENT_TYPE
from .state import ProxyState
from .status import page_html, status_data

if TYPE_CHECKING:
    import httpx

__all__ = ["create_app", "serve"]

log = logging.getLogger("regio.proxy")

#: The worker process's collector thresholds (:func:`gc.set_threshold`; CPython's default is
#: ``(700, 10, 10)``). A request lays out its window into tens of thousands of short-lived
#: objects; with the default a young collection runs every 700 allocations, while a request
#: and its neighbours are mid-way, so their objects are promoted and a full collection of the
#: whole heap (every session's engine) follows every quarter of its size: the collector's
#: CPU per request grew with the window and the number of sessions (60 sessions in one
#: process: 0.2 ms per request at their 2nd-5th steps, 5.9 ms at their 37th-40th, ~18,000-token
#: windows). Young collections every 100,000 allocations let a request's objects die young.
#: Set by :func:`serve` only (the process is the worker's).
GC_THRESHOLDS = (100_000, 20, 100)


def create_app(
    config: ProxyConfig | ProxyState,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    summary_transport: httpx.BaseTransport | None = None,
) -> Starlette:
    """The ASGI app of one worker for ``config`` (or a built :class:`ProxyState`);
    ``transport``: an httpx transport for the upstream instead of the network (an in-process
    upstream in tests), ``summary_transport`` a sync one for the summary calls of
    ``--summarizer upstream`` (``httpx.MockTransport`` serves as both). Raises
    :class:`regio.blueprint.BlueprintError` / :class:`regio.proxy.errors.ProxyConfigError`."""
    if isinstance(config, ProxyState):
        state = config
    else:
        state = ProxyState.build(config, transport=transport, summary_transport=summary_transport)

    def managed(api: str) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            return await serve_api(state, api, request)

        return endpoint

    async def metrics(request: Request) -> Response:
        return Response(state.metrics.text(), media_type=CONTENT_TYPE)

    async def page(request: Request) -> Response:
        return HTMLResponse(page_html())

    async def status(request: Request) -> Response:
        return JSONResponse(await state.run(status_data, state.records))

    async def other(request: Request) -> Response:
        reason = PassThrough("unsupported_api", f"{request.method} {request.url.path}")
        return await passthrough(state, request, await request.body(), reason, logged=True)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg:
            state.tasks = tg
            try:
                yield
            finally:
                state.tasks = None
                tg.cancel_scope.cancel()
        await state.close()

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    routes = [Route(path, managed(api), methods=["POST"]) for api, path in API_PATHS.items()]
    routes += [
        Route("/metrics", metrics, methods=["GET"]),
        Route("/", page, methods=["GET"]),
        Route("/status.json", status, methods=["GET"]),
        Route("/{path:path}", other, methods=methods),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.proxy = state
    return app


def serve(config: ProxyConfig) -> None:
    """Run one worker until interrupted (uvicorn on ``config.host:config.port``; its access log
    is off: the proxy logs no request line and no header), with the collector set for a
    server's heap (:data:`GC_THRESHOLDS`)."""
    import uvicorn

    app = create_app(config)
    gc.collect()
    gc.freeze()  # what the worker loaded (modules, the blueprint) is never collected again
    gc.set_threshold(*GC_THRESHOLDS)
    uvicorn.run(
        app,
        host=config.host,
        port=config.port,
        access_log=False,
        log_level="warning",
        timeout_graceful_shutdown=5,
        timeout_keep_alive=75,  # agents pause between calls; keep their connections open
    )
