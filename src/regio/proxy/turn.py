"""One request's work on its session's engine: admit what is new, lay out, answer regio's own
tool calls, recover from a length refusal, record the reply, commit.

Everything here is synchronous (the engine and the stores are); the server runs it in worker
threads (:mod:`regio.proxy.app`). The order of one request:

1. :meth:`Turn.prepare`: the items after the session's known prefix are read (a reply the proxy
   recorded is skipped, :class:`regio.proxy.records.Served`), the system prompt is placed, the
   messages admitted, the window laid out, the body built (:mod:`regio.proxy.payloads`).
2. The server sends it; a context-length refusal goes to :meth:`Turn.recover` (one compaction
   to half the allowance, one retry: ``Engine.recover_overflow``).
3. A reply calling regio's tools goes to :meth:`Turn.answer` (:mod:`regio.proxy.restore`),
   which lays out the next round.
4. :meth:`Turn.finish`: the reply's usage is observed (calibration, usage ledger), the request's
   figures are computed (:mod:`regio.proxy.accounting`) and the session is committed
   (:meth:`Turn.commit`).

**Compaction while the upstream answers.** The compactions a request's admission queues (and
the whole-context trigger) run after the request was sent, while the upstream generates its
answer (:meth:`Turn.compact_deferred`, which the server runs beside the upstream call; else
:meth:`Turn.finish`), not before it, when the window without them still fits (calibrated size
at most :data:`DEFER_SHARE` of the limit): the request goes upstream with the conversation one
turn over its budget, the next one with the compacted window, and the compaction's CPU is spent
during the model's time instead of in the request's latency. Every later step of the turn
(answering regio's tools, a length refusal's recovery, finishing) waits for it.
A window near the limit compacts before the request is sent, as ``Engine.request`` does; a
compaction still pending from an earlier request (one that failed after it was sent) too.
``--compact-before-send`` turns it off.

A reply is not admitted when it arrives: the client sends it back as the first item of its next
request, and it is admitted then, as the client holds it (its later requests are compared with
exactly those bytes). Only when regio's tools were answered does the engine record the exchange
at once (the model's calls, their results and the final reply), because the client holds only
the final reply.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import attrs
import msgspec

from regio.capture import LiveCapture
from regio.compaction._compactor import run_steps
from regio.compaction._flushes import boundary_steps
from regio.content import Message
from regio.errors import RegioError
from regio.layout import Request
from regio.layout.events import OrphanResultDropped, Repaired, ResultSynthesized

from . import accounting
from .dialects import ClientRequest
from .errors import ClientRequestError, PassThrough
from .history import digest
from .payloads import split_tools, tool_name, upstream_body
from .readers import item_messages, merge_calls, paused_call
from .records import Pending, Records, RequestStat, Served, SessionMeta
from .replies import Reply, Shown
from .requestlog import Waits, own_cpu
from .restore import answer_internal, regio_tool_names
from .sessions import Handle

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar, TypeVarTuple, Unpack

    from regio.engine import Engine
    from regio.persistence.store import SessionStore
    from regio.session import UsageRecord

    from .summaries import SummaryTally

    #: A step's result and its arguments (typing only: ``TypeVarTuple`` is Python 3.11+).
    T = TypeVar("T")
    Ts = TypeVarTuple("Ts")

__all__ = ["DEFER_SHARE", "Settings", "Turn"]

log = logging.getLogger("regio.proxy")

#: A request's compactions wait for its answer only when the window, uncompacted, is at most this
#: share of the limit (``context_window - max_output_tokens``): the layout's own additions
#: (headings, relief placeholders) stay inside the limit. Above it they run before the request.
DEFER_SHARE = 0.95

_HISTORY_KEY = {"anthropic": "messages", "openai_chat": "messages", "openai_responses": "input"}
#: What the render-time repair (:mod:`regio.layout.repair`) does to a broken history, as the
#: layout reports it on every request that carries it (its placements, ``moved_results``,
#: ``merged``, ``conversation_start``, repair nothing). The window is repaired first
#: (``Engine.repair``), so a request carries none of these unless something after the repair
#: broke a pair; a request counts the ones the session's previous request did not have.
_RENDER_REPAIRS = frozenset({"duplicate_result_dropped", "duplicate_call_dropped"})


@attrs.frozen
class Settings:
    """What every turn of a proxy shares: the blueprint's ``provider``, the cache ``profile``
    its predictions use (``None``: none), the capture rules, ``max_rounds`` of regio's own
    tool calls answered per request, the cache's time to live ``ttl_s`` (seconds, the
    blueprint's ``cache.ttl``) and ``compact_after_send`` (the module doc's deferred
    compaction; ``False``: a request's compactions always run before it is sent)."""

    provider: str
    profile: str | None
    capture: LiveCapture
    max_rounds: int = 3
    ttl_s: float = 300.0
    compact_after_send: bool = True


@attrs.define
class Turn:
    """One request on one session (module doc)."""

    settings: Settings
    handle: Handle
    client: ClientRequest
    incoming: list[bytes]
    provider: str
    t0: float = attrs.field(factory=time.time)
    cpu: float = 0.0
    wall: float = 0.0
    start: int = 0
    beside: str = ""
    touched: bool = False  # the engine changed (the system prompt went in first)
    new_tokens: list[int] = attrs.field(factory=list)
    events: Counter[str] = attrs.field(factory=Counter)
    request: Request | None = None
    previous: tuple[Request, float, int] | None = None
    rounds: int = 0
    fixed_tokens: int = 0
    repairs: Counter[str] = attrs.field(factory=Counter)
    shown: Shown | None = None
    notes: list[str] = attrs.field(factory=list)
    deferred: bool = False
    #: Where the request's added time went (:mod:`regio.proxy.requestlog`).
    waits: Waits = attrs.field(factory=Waits)

    @property
    def engine(self) -> Engine:
        return self.handle.engine

    def _timed(self, fn: Callable[[Unpack[Ts]], T], *args: Unpack[Ts]) -> T:
        started = own_cpu()
        unsubscribe = self.engine.subscribe(lambda e: self.events.update((e.kind,)))
        try:
            return fn(*args)
        finally:
            unsubscribe()
            self.cpu += own_cpu() - started

    # ----- 1. prepare -----------------------------------------------------------------------
    def prepare(self) -> dict[str, Any]:
        """Admit the new items and lay out the first round (module doc). Raises
        :class:`regio.proxy.errors.PassThrough` for an item no reader takes."""
        return self._timed(self._prepare)

    def _prepare(self) -> dict[str, Any]:
        engine, meta = self.engine, self.handle.meta
        last = engine.state.last_request
        if last is not None and engine.ledger.last is not None:
            self.previous = (last, meta.last_t, engine.ledger.last.output_tokens)
        self.start = self._skip_served(meta)
        # only what this request's admission queues may wait for the answer (a compaction
        # that failed after an earlier answer is still pending: it runs now, as it always did)
        defer = self.settings.compact_after_send and not engine.pending()
        messages: list[Message] = []
        where = _HISTORY_KEY[self.client.api]
        for pos in range(self.start, len(self.client.items)):
            items = self.client.items
            after = items[pos + 1] if pos + 1 < len(items) else None
            read = item_messages(self.client.api, items[pos], f"{where}[{pos}]", after)
            self.new_tokens.append(sum(engine.counter.count_message(m) for m in read))
            messages.extend(read)
        if self.client.api == "openai_responses":
            messages = merge_calls(messages)
        self._refuse_paused(messages, where)
        self._system(meta)  # the engine's first change: a pass-through before it leaves none
        self.settings.capture.admit(engine, messages, self.notes)
        # what the client sent may be broken (an interrupted call, a result whose call is
        # gone): the window is repaired in place, the transcript keeps what was sent
        self.repairs.update(change.action for change in engine.repair())
        if defer:
            size = engine.budget.size(self.provider, self.client.model or None)
            self.deferred = size <= DEFER_SHARE * engine.budget.limit
        return self._lay_out(offer=True)

    def _refuse_paused(self, messages: list[Message], where: str) -> None:
        """Raise :class:`PassThrough` (``paused_turn``) when the client's last item (in
        ``messages``, else read again: a served reply skipped) is a turn the API paused."""
        items = self.client.items
        if self.client.api != "anthropic" or not items:
            return
        if self.start >= len(items):
            messages = item_messages("anthropic", items[-1], f"{where}[{len(items) - 1}]")
        if (paused := paused_call(messages)) is not None:
            place = f"{where}[{len(items) - 1}]: server tool call {paused} not answered yet"
            raise PassThrough("paused_turn", place)

    def _skip_served(self, meta: SessionMeta) -> int:
        """The first position to admit: past the client's copy of a reply already recorded."""
        served, start = meta.served, meta.count
        if served is None or served.position != start or start >= len(self.client.items):
            return start
        try:
            read = item_messages(self.client.api, self.client.items[start], "served")
        except ClientRequestError:
            return start
        shown = Shown.of(Message("assistant", tuple(b for m in read for b in m.blocks)))
        if read and read[0].role == "assistant" and shown == Shown(served.text, served.call_ids):
            self.new_tokens.append(0)
            return start + 1
        return start

    def _system(self, meta: SessionMeta) -> None:
        self.touched = True
        key = digest(msgspec.json.encode([bytes(r) for r in self.client.system_raw])).hex()
        apply = self.handle.fresh or key != meta.system
        self.beside = self.settings.capture.system(self.engine, self.client.system, apply=apply)
        self.handle.meta = msgspec.structs.replace(meta, system=key)
        _, others = split_tools(self.client.api, self.client.tools)
        beside = self.beside
        if others:  # the client's non-function tools ride beside the window too
            beside += "\n\n" + msgspec.json.encode(others).decode()
        self.engine.budget.send_beside(beside, "" if self.client.api == "anthropic" else "\n\n")
        count = self.engine.counter.count  # the counter's cache makes a repeated prompt a lookup
        tools = bytes(self.client.tools_raw).decode() if self.client.tools_raw is not None else ""
        self.fixed_tokens = count(self.client.system) + (count(tools) if tools else 0)

    def _lay_out(self, *, offer: bool) -> dict[str, Any]:
        """The upstream body of the next round; without ``offer`` (the last round) regio's own
        tools are left out of it, so the model answers the client."""
        functions, _ = split_tools(self.client.api, self.client.tools)
        request, payload = self.engine.request(
            self.provider,
            self.client.model or None,
            tools=functions,
            api=self.client.api,
            flush=not (self.deferred and self.rounds == 0),
        )
        before = self.request or (self.previous[0] if self.previous else None)
        self.repairs.update(kind for kind, _ in _repairs(request) - _repairs(before))
        self.request = request
        body = upstream_body(
            self.client, payload, beside=self.beside, provider=self.settings.provider
        )
        if not offer and "tools" in body:
            own = regio_tool_names(self.engine)
            body["tools"] = [t for t in body["tools"] if tool_name(self.client.api, t) not in own]
            if not body["tools"] and self.client.tools_raw is None:
                del body["tools"]
        return body

    @property
    def regio_tools(self) -> frozenset[str]:
        """The names of regio's own tools offered in this round."""
        if self.rounds >= self.settings.max_rounds:
            return frozenset()
        return regio_tool_names(self.engine)

    # ----- 2. overflow ----------------------------------------------------------------------
    def recover(self, status: int, error: object) -> dict[str, Any] | None:
        """The body to retry with after an upstream refusal ``error`` (its decoded body), or
        ``None`` when it is no context-length refusal or the retry was already made. Raises
        :class:`regio.ContextOverflowError` when compaction cannot make the request fit."""
        return self._timed(self._recover, status, error)

    def _recover(self, status: int, error: object) -> dict[str, Any] | None:
        body = error if isinstance(error, dict) else {"error": {"message": str(error)}}
        token = self.engine.recover_overflow({"status": status, **body})
        if token is None:
            return None
        return self._lay_out(offer=self.rounds < self.settings.max_rounds)

    # ----- 3. regio's own tools --------------------------------------------------------------
    def answer(self, reply: Reply) -> dict[str, Any]:
        """Record ``reply``, answer its calls to regio's tools and lay out the next round."""
        return self._timed(self._answer, reply)

    def _answer(self, reply: Reply) -> dict[str, Any]:
        if reply.usage is not None:
            self._observe(reply.usage)
        answer_internal(self.engine, reply)
        self.rounds += 1
        return self._lay_out(offer=self.rounds < self.settings.max_rounds)

    def _observe(self, usage: dict[str, Any]) -> Any:
        return self.engine.observe(usage, provider=self.provider, model=self.client.model or None)

    # ----- 4. finish --------------------------------------------------------------------------
    def finish(
        self,
        reply: Reply | None,
        status: int,
        predicted: int | None = None,
        summary: SummaryTally | None = None,
    ) -> RequestStat:
        """Observe ``reply`` (``None``: the upstream sent none), record the request and return its
        :class:`RequestStat`; ``predicted``: a per-token prediction of the cached tokens
        (:mod:`regio.proxy.slot`) that replaces the block model's; ``summary``: the request's
        summary calls (``--summarizer upstream``, :mod:`regio.proxy.summaries`), read after the
        deferred compaction ran, priced at their model's prices."""
        return self._timed(self._finish, reply, status, predicted, summary)

    def _finish(
        self,
        reply: Reply | None,
        status: int,
        predicted: int | None,
        summary: SummaryTally | None,
    ) -> RequestStat:
        record = self._observe(reply.usage) if reply is not None and reply.usage else None
        if reply is not None and self.rounds and reply.complete:
            self.engine.add_message(reply.message)
            self.shown = reply.shown
        if self.deferred:
            self._compact_deferred()
        meta = self.handle.meta
        client_tokens = meta.tokens + sum(self.new_tokens) + self.fixed_tokens
        upstream = (self.request.tokens + self.engine.budget.beside_tokens) if self.request else 0
        stat = self._stat(record, client_tokens, upstream, status, predicted)
        if summary is not None:
            pricing = self.engine.ledger.pricing(self.provider, summary.model)
            cost = accounting.summary_cost(pricing, summary.usage)
            stat = msgspec.structs.replace(stat, summary_cost_usd=cost, **summary.fields())
        self.handle.meta = _totalled(meta, stat)
        return stat

    def compact_deferred(self) -> None:
        """Run the compactions :meth:`prepare` deferred (module doc), once; the server calls it
        while the upstream answers, :meth:`finish` when it was not called."""
        self._timed(self._compact_deferred)

    def _compact_deferred(self) -> None:
        """The turn boundary's compactions (``Engine.request``'s flush: the whole-context
        trigger, then the pending queue), run after the request was sent (module doc). A
        failure is logged and leaves them pending: the next request runs them before it is
        sent."""
        if not self.deferred:
            return
        self.deferred = False
        engine = self.engine
        model = self.client.model or engine.options.model
        steps = boundary_steps(engine.session, engine.budget, self.provider, model)
        try:
            with engine.events.transaction():
                run_steps(engine.session, steps)
        except RegioError as exc:
            log.warning("session %s: deferred compaction failed (%s)", self.handle.id, exc)

    def _stat(
        self, record: UsageRecord | None, client: int, upstream: int, status: int, slot: int | None
    ) -> RequestStat:
        meta = self.handle.meta
        predicted: tuple[int, int] | None = None
        if self.request is not None and self.settings.profile is not None:
            predicted = accounting.predict_blocks(
                self.settings.profile,
                self.previous,
                self.request,
                self.t0,
                self.handle.prediction,
            )
        if slot is not None:
            predicted = (slot, 0)
        prompt = record.prompt_tokens if record is not None else 0
        scale = prompt / upstream if prompt and upstream else 1.0
        pricing = self.engine.ledger.pricing(self.provider, self.client.model or "")
        cached = bool(meta.last_client) and self.t0 - meta.last_t < self.settings.ttl_s
        as_is = accounting.as_is_cost(
            pricing,
            int(meta.last_client * scale),
            int(client * scale),
            record.output_tokens if record is not None else 0,
            cached=cached,
        )
        read = record.cache_read_tokens if record is not None else 0
        return RequestStat(
            index=meta.totals.requests,
            t=self.t0,
            client_tokens=client,
            upstream_tokens=upstream,
            prompt_tokens=prompt,
            output_tokens=record.output_tokens if record is not None else 0,
            cache_read=read,
            cache_write=record.cache_creation_tokens if record is not None else 0,
            predicted_read=predicted[0] if predicted else None,
            predicted_write=predicted[1] if predicted else None,
            cost_usd=record.cost_usd if record is not None else 0.0,
            as_is_cost_usd=as_is,
            compacted=self.events["compaction_finished"] > 0,
            first_miss=self._first_miss(prompt, read) if record is not None else None,
            added_ms=self.cpu * 1000.0,
            restores=self.rounds,
            repairs=self.repairs.total(),
            repaired=dict(self.repairs),
            status=status,
            summary_cost_usd=0.0,
        )

    def _first_miss(self, prompt: int, read: int) -> str | None:
        conversation = self.engine.window.conversation
        name = conversation.name if conversation is not None else "messages"
        return accounting.first_miss(self.request, prompt, read, name)

    # ----- commit -----------------------------------------------------------------------------
    def commit(self, records: Records, store: SessionStore, stat: RequestStat) -> bool:
        """Save the session (module doc of :mod:`regio.proxy.records`): positions and the pending
        mark, the engine, then the meta and the stat. ``False`` when the lease was lost (nothing
        more is written; the next request redoes this one's admission)."""
        started, cpu = time.perf_counter(), own_cpu()
        try:
            return self._timed(self._commit, records, store, stat)
        finally:
            self.waits.commit += time.perf_counter() - started
            self.waits.commit_cpu += own_cpu() - cpu

    def _commit(self, records: Records, store: SessionStore, stat: RequestStat) -> bool:
        meta, engine = self.handle.meta, self.engine
        count = len(self.client.items)
        tokens = meta.tokens + sum(self.new_tokens)
        version = (engine.store_mark.version if engine.store_mark is not None else 0) + 1
        rows = [
            (pos, self.incoming[pos], n)
            for pos, n in zip(range(meta.count, count), self.new_tokens, strict=False)
        ]
        pending = msgspec.structs.replace(meta, pending=Pending(count, tokens, version))
        if not records.prepare(meta.id, self.handle.token, pending, rows):
            return False
        engine.save_to(store, meta.id, lease=self.handle.lease)
        served = None
        if self.shown is not None:
            served = Served(count, self.shown.text, self.shown.call_ids)
        final = msgspec.structs.replace(
            meta,
            count=count,
            tokens=tokens,
            engine_version=engine.store_mark.version,
            pending=None,
            served=served,
            updated=time.time(),
            last_t=self.t0,
            last_client=stat.client_tokens,
        )
        self.handle.meta = final
        return records.commit(meta.id, self.handle.token, final, stat)


def _repairs(request: Request | None) -> set[tuple[str, str]]:
    """The repairs a laid-out request carries: (action, tool call id)."""
    if request is None:
        return set()
    out: set[tuple[str, str]] = set()
    for e in request.events:
        if isinstance(e, Repaired) and e.action in _RENDER_REPAIRS:
            out.add((e.action, e.tool_use_id))
        elif isinstance(e, OrphanResultDropped):
            out.add(("orphan_result_dropped", e.tool_use_id))
        elif isinstance(e, ResultSynthesized) and not e.pending:
            out.add(("result_synthesized", e.tool_use_id))
    return out


def _totalled(meta: SessionMeta, stat: RequestStat) -> SessionMeta:
    t = meta.totals
    first = dict(t.first_miss)
    if stat.first_miss is not None:
        first[stat.first_miss] = first.get(stat.first_miss, 0) + 1
    totals = msgspec.structs.replace(
        t,
        requests=t.requests + 1,
        client_tokens=t.client_tokens + stat.client_tokens,
        upstream_tokens=t.upstream_tokens + stat.upstream_tokens,
        prompt_tokens=t.prompt_tokens + stat.prompt_tokens,
        output_tokens=t.output_tokens + stat.output_tokens,
        cache_read=t.cache_read + stat.cache_read,
        cache_write=t.cache_write + stat.cache_write,
        predicted_read=t.predicted_read + (stat.predicted_read or 0),
        predicted_write=t.predicted_write + (stat.predicted_write or 0),
        predicted=t.predicted + int(stat.predicted_read is not None),
        cost_usd=t.cost_usd + (stat.cost_usd or 0.0),
        unpriced=t.unpriced + int(stat.cost_usd is None),
        as_is_cost_usd=t.as_is_cost_usd + (stat.as_is_cost_usd or 0.0),
        as_is_unpriced=t.as_is_unpriced + int(stat.as_is_cost_usd is None),
        compactions=t.compactions + int(stat.compacted),
        restores=t.restores + stat.restores,
        repairs=t.repairs + stat.repairs,
        reported=t.reported + int(stat.prompt_tokens > 0),
        first_miss=first,
        summary_calls=t.summary_calls + stat.summary_calls,
        summary_input_tokens=t.summary_input_tokens + stat.summary_input_tokens,
        summary_output_tokens=t.summary_output_tokens + stat.summary_output_tokens,
        summary_cost_usd=t.summary_cost_usd + (stat.summary_cost_usd or 0.0),
        summary_unpriced=t.summary_unpriced + stat.summary_unpriced,
    )
    return msgspec.structs.replace(meta, totals=totals)
