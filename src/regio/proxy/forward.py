"""One client request through the proxy: read it, find and lease its session, lay out the
window, send it upstream, relay the answer, commit.

* A request the proxy cannot manage (:class:`regio.proxy.errors.PassThrough`) and every other
  path (``/v1/models``, ...) goes upstream as sent; its answer comes back as received.
* A body that is not a request of its API is answered 400 in that API's error shape, as is a
  request the engine cannot fit; neither commits anything, nor does an upstream refusal.
* The upstream's answer comes back with its status, headers (:mod:`regio.proxy.upstream`) and
  body unchanged (a stream event by event, :mod:`regio.proxy.streams`), plus the header
  ``x-regio-session``. A length refusal gets one compaction and one retry (``Turn.recover``); a
  reply calling regio's own tools is answered by the proxy first (``Turn.answer``).

The engine's work runs in worker threads, in as few trips as the order allows
(:mod:`regio.proxy.state`). The session's lease (:mod:`regio.persistence.store.lease`) is held
from before the session is opened until after it is committed, renewed every third of
``--lease-seconds``: two requests of one session, on any workers, never work on it at once (a
second waits up to ``--lease-wait``, then 503, which the SDKs retry). A worker killed
mid-request stops renewing, its lease lapses and the next request continues from the store
(:mod:`regio.proxy.records`). A client gone mid-stream cancels the upstream call; what it sent
is committed. A compaction the turn deferred (:mod:`regio.proxy.turn`) runs while the model
generates. The turn is committed before the answer's end reaches the client (a stream's last
event is held back), so an immediate next request finds the session where this one left it.
With ``--summarizer upstream`` the summaries are written by the upstream with this request's
key (:mod:`regio.proxy.summaries`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import httpx
import msgspec
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from regio.errors import RegioError
from regio.persistence.store import SessionLeasedError, SessionStoreError, StoreUnavailableError

from .dialects import ClientRequest, parse_request
from .engines import api_provider
from .errors import ClientRequestError, PassThrough
from .history import digests, fingerprint, first_user
from .replies import Reply, error_body, read_reply
from .requestlog import Waits, log_request
from .sessions import Handle, session_key
from .sse import EventSplitter, encode_event
from .state import ProxyState
from .streams import Relay, Stream, relay_for
from .summaries import SummaryTally
from .turn import Turn
from .upstream import client_headers, drained, release, response_headers

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar, TypeVarTuple, Unpack

    #: A step's result and its arguments (typing only: ``TypeVarTuple`` is Python 3.11+).
    T = TypeVar("T")
    Ts = TypeVarTuple("Ts")

__all__ = ["passthrough", "serve_api"]

log = logging.getLogger("regio.proxy")


def _error(
    api: str, status: int, message: str, kind: str = "invalid_request_error", session: str = ""
) -> Response:
    headers = {"x-regio-session": session} if session else None
    return JSONResponse(error_body(api, message, kind), status_code=status, headers=headers)


async def passthrough(
    state: ProxyState,
    request: Request,
    body: bytes,
    reason: PassThrough,
    api: str = "openai_chat",
    *,
    logged: bool = False,
) -> Response:
    """Send ``request`` upstream as it came and return the answer as it comes (an upstream that
    cannot be reached is answered 502 in ``api``'s error shape), counted under
    ``reason.reason``; ``logged``: also write its ``--request-log`` line (a request of no
    session; a session's turn writes its own)."""
    state.metrics.passthrough.labels(reason.reason).inc()
    headers = client_headers(request.headers.items())
    try:
        response = await state.upstream.open(
            request.method, request.url.path, request.url.query, headers, body
        )
    except httpx.HTTPError as exc:
        answer = _error(api, 502, f"upstream unreachable: {type(exc).__name__}", "api_error")
        if logged:
            _log_passthrough(state, reason, answer.status_code)
        return answer
    if logged:
        _log_passthrough(state, reason, response.status_code)

    async def chunks() -> AsyncIterator[bytes]:
        try:
            async for chunk in response.aiter_raw():
                yield chunk
        finally:
            await release(response)

    status, returned = response.status_code, _returned(response)
    return Stream(chunks(), lambda: release(response), status_code=status, headers=returned)


def _returned(response: httpx.Response) -> MutableHeaders:  # a repeated header repeated
    return MutableHeaders(raw=response_headers(response.headers))


def _log_passthrough(state: ProxyState, reason: PassThrough, status: int) -> None:
    log_request(state.config.request_log, session=None, status=status, **_passed(reason))


def _passed(reason: PassThrough) -> dict[str, Any]:  # its --request-log field
    return {"passthrough": {"reason": reason.reason, "place": reason.place}}


async def _handle(
    state: ProxyState,
    client: ClientRequest,
    key: str,
    header: str | None,
    incoming: list[bytes],
    waits: Waits,
) -> Handle:
    """Resolve the session and take its lease (resolving again if it moved meanwhile): one trip
    to a worker thread when its lease is free (:meth:`ProxyState.open_session`). Raises
    :class:`SessionLeasedError` when the session stays busy past ``--lease-wait``. Its waits
    go to ``waits``."""
    deadline = time.monotonic() + state.config.lease_wait
    while True:
        target, handle = await state.run(
            state.open_session, key, header, incoming, client.api, waits=waits
        )
        if handle is None:  # another request holds the lease: wait for it here
            waited = time.perf_counter()
            lease = await state.lease(target.id, deadline)
            waits.lease_wait += time.perf_counter() - waited
            try:  # a cancellation before the trip starts (waiting for a thread) keeps no lease
                handle = await state.run(
                    state.opened, target, lease, incoming, client.api, waits=waits
                )
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await lease.arelease(offload=anyio.to_thread.run_sync)
                raise
        if handle is not None:
            if target.parent is not None and handle.fresh:
                state.metrics.branches.labels(handle.id).inc()
            return handle


async def serve_api(state: ProxyState, api: str, request: Request) -> Response:
    """Serve one request of ``api`` (module doc)."""
    asked = time.perf_counter()
    body = await request.body()
    received = time.perf_counter()
    waits = Waits(body=received - asked)
    started = time.thread_time()
    try:
        client = parse_request(api, body)
        incoming = digests(client.items)
        fp = fingerprint(client.system_raw, client.tools_raw, first_user(client.items))
        header = request.headers.get("x-regio-session")
        key = session_key(header, fp)
    except ClientRequestError as exc:
        return _error(api, 400, str(exc))
    except PassThrough as exc:
        return await passthrough(state, request, body, exc, api, logged=True)
    parse_cpu = time.thread_time() - started
    waits.read = time.perf_counter() - received
    try:
        handle = await _handle(state, client, key, header, incoming, waits)
    except SessionLeasedError as exc:
        message = f"session busy with another request; retry later ({exc})"
        return _error(
            api, 503, message, "overloaded_error" if api == "anthropic" else "server_error"
        )
    except SessionStoreError as exc:  # the store is down, or a session in it is damaged
        status = 503 if isinstance(exc, StoreUnavailableError) else 500
        kind = "api_error" if api == "anthropic" else "server_error"
        return _error(api, status, f"regio proxy: the session store refused: {exc}", kind)
    try:  # until the exchange holds the lease, a failure here gives it back
        provider = api_provider(state.settings.provider, api)
        turn = Turn(state.settings, handle, client, incoming, provider, cpu=parse_cpu, waits=waits)
        exchange = _Exchange(state, request, turn)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await handle.lease.arelease(offload=anyio.to_thread.run_sync)
        raise
    turn.wall = time.perf_counter() - received  # reading, finding and leasing the session
    return await exchange.run(body)


class _Exchange:
    """The lease-holding part of one request (module doc)."""

    def __init__(self, state: ProxyState, request: Request, turn: Turn) -> None:
        self.state, self.request, self.turn = state, request, turn
        self.api = turn.client.api
        self.lost = anyio.Event()
        self.scope = anyio.CancelScope()
        self.sent: dict[str, Any] = {}
        self.ended = False
        self.beside = 0.0
        self.compaction: anyio.Event | None = None
        self.summary = SummaryTally()
        self.unbind: Callable[[], None] = lambda: None
        self.response: httpx.Response | None = None  # the last round's (_send)

    def _bind_summarizer(self) -> None:
        """``--summarizer upstream``: the engine summarizes through the upstream with this
        request's key until the request ends (:mod:`regio.proxy.summaries`)."""
        summaries, turn = self.state.summaries, self.turn
        if summaries is None:
            return
        url, model = self.request.url, self.state.blueprint.summarizer.model
        self.summary, self.unbind = summaries.bind(
            turn.engine,
            api=self.api,
            path=url.path + (f"?{url.query}" if url.query else ""),
            headers=self.request.headers.items(),
            model=model or turn.client.model or self.state.blueprint.model.name,
            session=turn.handle.id,
            params=turn.client.params,
        )

    async def _work(self, fn: Callable[[Unpack[Ts]], T], *args: Unpack[Ts]) -> T:
        """Run one of the turn's steps in a worker thread (after the deferred compaction, when
        one runs), its wall time added to the turn's."""
        started = time.perf_counter()
        try:
            compaction = self.compaction  # the engine is the deferred compaction's until done
            if compaction is not None and not compaction.is_set():  # a set one: no loop pass
                await compaction.wait()
                self.turn.waits.compaction_wait += time.perf_counter() - started
            return await self.state.run(fn, *args, waits=self.turn.waits)
        finally:
            self.turn.wall += time.perf_counter() - started

    def _compact_meanwhile(self) -> None:
        """Start the turn's deferred compaction (:mod:`regio.proxy.turn`) beside the upstream
        call; its wall time is counted apart (``beside_ms``): the request waits for it only where a
        later step does."""
        if not self.turn.deferred or self.state.tasks is None:
            return  # nothing deferred, or no task group: Turn.finish runs it
        done = self.compaction = anyio.Event()

        async def run() -> None:
            started = time.perf_counter()
            try:
                await self.state.run(self.turn.compact_deferred)
            except Exception:  # its compactions stay pending: the next request runs them first
                log.exception(
                    "session %s: compaction beside the upstream failed", self.turn.handle.id
                )
            finally:
                self.beside += time.perf_counter() - started
                done.set()

        self.state.background(run)

    async def _keep_lease(self) -> None:
        """Renew the session's lease until the request ends; a lost lease sets ``lost`` (the
        request then commits nothing)."""
        with self.scope:
            try:
                await self.turn.handle.lease.keep_alive(offload=anyio.to_thread.run_sync)
            except RegioError:  # SessionLeasedError, or the store failed to renew
                self.lost.set()

    async def run(self, body: bytes) -> Response:
        self.state.background(self._keep_lease)
        try:
            self._bind_summarizer()
            return await self._start(body)
        except BaseException:
            await self._end(None, 0)
            raise

    async def _end(
        self,
        reply: Reply | None,
        status: int,
        passed: PassThrough | None = None,
        *,
        refused: bool = False,
    ) -> None:
        """Finish and commit the turn, give the lease back, once, shielded; ``passed``: why it
        went upstream unmanaged. Nothing is committed when ``refused`` or when nothing went
        upstream (a failure while it was read), nor when the upstream refused it (``end_turn``)."""
        if self.ended:
            return
        self.ended = True
        turn, state = self.turn, self.state
        ok, stat = False, None
        with anyio.CancelScope(shield=True):
            try:
                ok, stat = await self._work(
                    state.end_turn,
                    turn,
                    reply,
                    status,
                    self.sent,
                    self.summary,
                    self.lost.is_set,
                    self.unbind,
                    refused or not self.sent,
                )
            finally:  # end_turn gave the lease back unless it failed (a second release is a no-op)
                self.unbind()  # before the lease goes: the next request binds its own
                state.metrics.summarized(turn.handle.id, self.summary)
                self.scope.cancel()
                try:
                    await turn.handle.lease.arelease(offload=anyio.to_thread.run_sync)
                except RegioError as exc:  # it lapses by itself after --lease-seconds
                    log.warning("session %s: lease not released (%s)", turn.handle.id, exc)
            log_request(
                state.config.request_log,
                session=turn.handle.id,
                leased=turn.handle.leased_at,
                committed=bool(ok),
                compacted=bool(stat and stat.compacted),
                repairs=dict(turn.repairs),
                status=status,
                items=turn.handle.meta.count,
                client_tokens=stat.client_tokens if stat else 0,
                upstream_tokens=stat.upstream_tokens if stat else 0,
                added_cpu_ms=round(turn.cpu * 1000, 3),
                added_ms=round(turn.wall * 1000, 3),
                beside_ms=round(self.beside * 1000, 3),
                **turn.waits.fields(turn.wall),
                **self.summary.fields(),
                **({} if passed is None else _passed(passed)),
            )

    async def _refused(self, exc: RegioError) -> Response:
        """Answer 400 for what the engine refused, committing nothing of the request."""
        self.state.metrics.refused(self.turn.handle.id, self.turn.client.api)
        await self._end(None, 400, refused=True)
        return _error(self.api, 400, str(exc), session=self.turn.handle.id)

    async def _send(self, body: dict[str, Any]) -> httpx.Response:
        self.sent = body
        headers = client_headers(self.request.headers.items())
        data = msgspec.json.encode(body)
        url = self.request.url
        self.response = await self.state.upstream.open("POST", url.path, url.query, headers, data)
        return self.response

    async def _start(self, body: bytes) -> Response:
        turn = self.turn
        try:
            upstream_body = await self._work(turn.prepare)
        except PassThrough as exc:
            # the upstream's status is logged: the turn ends once the answer has started
            status = 0
            try:
                answer = await passthrough(self.state, self.request, body, exc, self.api)
                status = answer.status_code
            finally:  # unmanaged: nothing of it is committed (it is passed through again)
                await self._end(None, status, exc, refused=True)
            return answer
        except RegioError as exc:  # the engine refused what the client sent: commit nothing
            return await self._refused(exc)
        self._compact_meanwhile()  # starts once _send awaits: the body is encoded by then
        try:
            response = await self._send(upstream_body)
            response = await self._recovered(response)
        except RegioError as exc:  # a length refusal the engine could not recover from
            return await self._refused(exc)
        except httpx.HTTPError as exc:
            await self._end(None, 502)
            why = f"upstream unreachable: {type(exc).__name__}"
            return _error(self.api, 502, why, "api_error", session=turn.handle.id)
        if response.status_code != 200:
            data = await drained(response)
            await self._end(None, response.status_code)
            return self._plain(response, data)
        if turn.client.stream:
            return Stream(
                self._relay(response),
                lambda: self._end_stream(None, 0),  # its last response given back, ended
                status_code=200,
                headers=self._headers(response),
            )
        return await self._complete(response)

    def _headers(self, response: httpx.Response) -> MutableHeaders:
        headers = _returned(response)
        headers["x-regio-session"] = self.turn.handle.id
        return headers

    def _plain(self, response: httpx.Response, data: bytes) -> Response:
        return Response(data, status_code=response.status_code, headers=self._headers(response))

    async def _recovered(self, response: httpx.Response) -> httpx.Response:
        """The response after one overflow recovery and retry when the first was a length
        refusal (``Turn.recover``)."""
        if response.status_code not in (400, 413):
            return response
        data = await drained(response)
        try:
            error = json.loads(data)
        except ValueError:
            error = {"error": {"message": data.decode(errors="replace")}}
        retry = await self._work(self.turn.recover, response.status_code, error)
        if retry is None:
            return httpx.Response(response.status_code, headers=response.headers, content=data)
        return await self._send(retry)

    async def _complete(self, response: httpx.Response) -> Response:
        """A non-streamed answer, after the rounds of regio's own tools."""
        turn = self.turn
        while True:
            data = await drained(response)
            try:
                reply = read_reply(json.loads(data), turn.regio_tools)
            except (ValueError, RegioError):
                await self._end(None, response.status_code)
                return self._plain(response, data)
            if not reply.internal or response.status_code != 200:
                await self._end(reply, response.status_code)
                return self._plain(response, data)
            response = await self._send(await self._work(turn.answer, reply))
            if response.status_code != 200:
                data = await drained(response)
                await self._end(None, response.status_code)
                return self._plain(response, data)

    async def _relay(self, response: httpx.Response) -> AsyncIterator[bytes]:
        """The client's stream (module doc of :mod:`regio.proxy.streams`)."""
        turn = self.turn
        relay = relay_for(self.api, turn.regio_tools)
        reply: Reply | None = None
        last = b""  # held back until the turn is committed
        try:
            while True:
                async for out in self._events(response, relay):
                    if last:
                        yield last
                    last = out
                await release(response)
                reply = relay.reply()
                if not (relay.held and reply.internal and reply.complete):
                    break
                response = await self._send(await self._work(turn.answer, reply))
                if response.status_code != 200:
                    text = (await drained(response)).decode(errors="replace")[:500]
                    if last:
                        yield last
                    last = self._error_event(f"upstream {response.status_code}: {text}")
                    reply = None
                    break
                relay = relay_for(self.api, turn.regio_tools, relay.next_carry())
            await self._end_stream(reply)
            if last:  # the answer's end: the client may send its next request once it has it
                yield last
        except Exception:  # the upstream failed mid-stream: what it had sent still goes out
            await self._end_stream(reply)
            if last:
                yield last
            raise
        finally:
            await self._end_stream(reply)

    async def _end_stream(self, reply: Reply | None, status: int = 200) -> None:
        """Give the last round's response back now (shielded), not at finalization; end."""
        if self.response is not None:
            await release(self.response)
        await self._end(reply, status)

    async def _events(self, response: httpx.Response, relay: Relay) -> AsyncIterator[bytes]:
        splitter = EventSplitter()
        async for chunk in response.aiter_raw():
            started = time.thread_time()
            out = [b for e in splitter.feed(chunk) if (b := relay.feed(e)) is not None]
            self.turn.cpu += time.thread_time() - started
            if out:
                yield b"".join(out)
        tail = [b for e in splitter.close() if (b := relay.feed(e)) is not None]
        if tail:
            yield b"".join(tail)

    def _error_event(self, message: str) -> bytes:
        body = error_body(self.api, message, "api_error")
        return encode_event(json.dumps(body), "error" if self.api == "anthropic" else None)
