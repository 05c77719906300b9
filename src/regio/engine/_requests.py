"""Requests and their usage: :func:`request_steps` (turn-boundary flush, then
:func:`lay_out_steps`: layout, ceiling check, renderer) and :func:`observe_usage` (usage
ledger and calibration) -- the request half of :class:`regio.engine.Engine`, working on its
parts. A request is a step generator: its compactions yield their summarizer jobs to the
driver the caller chose (``Engine.request`` / ``Engine.arequest``)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from regio.compaction import _flush as cp
from regio.compaction._ceiling import evict_for_ceiling
from regio.compaction._delegation import render_option
from regio.compaction._flushes import boundary_steps, pressure_steps
from regio.errors import ContextOverflowError, UsageError
from regio.events import Event
from regio.layout import (
    CacheEconomics,
    LayoutState,
    Request,
    ToolSpec,
    VolatilityObserved,
    assemble,
)
from regio.providers.economics import economics_for
from regio.regions import SlidingWindow
from regio.session._budget import EngineBudget
from regio.session._events import CalibrationUpdated, OverBudget, UsageObserved
from regio.session._render import api_for, render_payload
from regio.session._session import Session, Steps
from regio.session._state import RegionHashes, SessionState
from regio.session._usage import UsageLedger, UsageRecord
from regio.textrepair import repair_text

from . import _turnfit as turnfit

__all__ = ["lay_out_steps", "observe_usage", "request_fingerprint", "request_steps"]


def request_fingerprint(
    c: Session,
    specs: Sequence[ToolSpec],
    provider: str,
    model: str,
    api: str | None,
    hashes: RegionHashes | None = None,
) -> str:
    """sha256 (hex) of everything a layout reads apart from the carried layout state: every
    region's name, version and content hash, the window's turn, next entry number and pending
    compactions, the tool specs, ``provider`` / ``model`` / ``api`` and the layout options.
    Equal fingerprints mean the same window state (stable across processes: no ``hash()``).
    ``hashes``: the session's :class:`RegionHashes`, so the content hashes cost what is new."""
    o = c.options
    h = hashlib.sha256()
    content_hash = hashes.content_hash if hashes is not None else (lambda r: r.content_hash())
    for r in c.window.regions:
        h.update(f"{r.name}\0{r.version}\0{content_hash(r)}\0".encode("utf-8", "surrogatepass"))
    pending = [(p.id, p.region, tuple(p.entry_ids)) for p in c.window.pending_compactions()]
    h.update(
        msgspec.json.encode(
            [
                c.window.turn,
                c.window.next_entry,
                pending,
                [[t.name, t.description, t.input_schema] for t in specs],
                [provider, model, api, o.strategy, o.ttl, o.chunk_tokens, o.settle_share],
                o.session_id,
            ]
        )
    )
    return h.hexdigest()


def _assemble(
    c: Session,
    state: SessionState,
    specs: Sequence[ToolSpec],
    economics: CacheEconomics,
    carried: LayoutState | None,
    sent_at: float,
    odds: tuple[float | None, float | None],
) -> Request:
    options = c.options
    return assemble(
        c.window,
        options.strategy,
        tools=specs,
        state=carried,
        ttl=options.ttl,
        economics=economics,
        chunk_tokens=options.chunk_tokens,
        settle_share=options.settle_share,
        session_id=options.session_id,
        log=state.render_log,
        sent_at=sent_at,
        rewrite_odds=odds[0],
        rewrite_horizon=odds[1],
    )


def _economics(c: Session, provider: str, model: str) -> CacheEconomics:
    """The cache economics the request is laid out with (its provider and model, else the
    engine's provider)."""
    return economics_for(provider or c.options.provider or None, model or None)


def _rewrite_outlook(c: Session, economics: CacheEconomics) -> tuple[float | None, float | None]:
    """:meth:`regio.regions.SlidingWindow.rewrite_odds` and
    :meth:`~regio.regions.SlidingWindow.rewrite_horizon` of the window's conversation (``None``
    without one); the odds are not computed (``None``) when a conversation marker has no write
    fee to lose (``mark_odds`` 0: OpenAI's, Gemini's automatic caches), where a marker always
    pays."""
    conv = c.window.conversation
    if not isinstance(conv, SlidingWindow):
        return None, None
    odds = conv.rewrite_odds() if economics.odds_for(c.options.ttl) > 0 else None
    return odds, conv.rewrite_horizon()


def request_steps(
    c: Session,
    budget: EngineBudget,
    state: SessionState,
    provider: str,
    model: str,
    *,
    tools: Sequence[ToolSpec],
    api: str | None,
    max_tokens: int | None,
    flush: bool,
    extra: Mapping[str, Any],
) -> Steps[tuple[Request, dict[str, Any]]]:
    """``Engine.request``: with ``flush`` (and ``auto_compact``) the turn-boundary flush
    (:func:`regio.compaction._flushes.boundary_steps`), then :func:`lay_out_steps`."""
    budget.reserve(provider, model)  # what the regions may fill: elastic rooms
    if flush and c.options.auto_compact:
        yield from boundary_steps(c, budget, provider, model)
    return (
        yield from lay_out_steps(
            c,
            budget,
            state,
            provider,
            model,
            tools=tools,
            api=api,
            max_tokens=max_tokens,
            extra=extra,
        )
    )


def lay_out_steps(
    c: Session,
    budget: EngineBudget,
    state: SessionState,
    provider: str,
    model: str,
    *,
    tools: Sequence[ToolSpec],
    api: str | None,
    max_tokens: int | None,
    extra: Mapping[str, Any],
) -> Steps[tuple[Request, dict[str, Any]]]:
    """Lay the window out for ``provider`` / ``model`` and render the payload. A request whose
    calibrated size (:meth:`regio.session._budget.EngineBudget.calibrated_ceiling`: the factor,
    or the recent reports' median when higher) is over ``budget.limit`` is compacted to half
    the allowance (with ``auto_compact``) and laid out again, then, still over, the sliding
    windows compaction cannot shrink roll off their oldest units
    (:mod:`regio.compaction._ceiling`), then, when the newest turn, which neither takes, still
    does not fit, that turn's results are trimmed (:func:`regio.engine._turnfit.shorten`);
    still over: :class:`ContextOverflowError`. Keeps the layout state, request and raw estimate
    in ``state``.

    Same state, same bytes: when :func:`request_fingerprint` equals the last request's (a
    retry, or a second call with nothing changed), the layout starts again from the layout
    state the last request started from, so the payload, cache markers included, is the same
    byte for byte (the layout's breakpoint planning reads the previous request's marks). A
    region moved by its observed volatility is reported once (``VolatilityObserved``)."""
    specs = budget.tool_specs(tools)
    fingerprint = request_fingerprint(c, specs, provider, model, api, state.region_hashes)
    same = fingerprint == state.layout_fingerprint
    carried = state.layout_input if same else state.layout_state
    sent_at = float(c.clock())  # read once: the layout's and the send time
    last = state.layout_state  # a retry lays out with the odds it had (calibration moves them)
    econ = _economics(c, provider, model)
    odds = (last.rewrite_odds, last.rewrite_horizon) if same and last else _rewrite_outlook(c, econ)
    req = _assemble(c, state, specs, econ, carried, sent_at, odds)
    raw = budget.request_estimate(req, provider)
    measured = budget.layout_tokens
    if budget.measure_layout(raw, provider) > measured:
        budget.reserve(provider, model)  # the next admissions leave the layout's share free
    limit = budget.limit
    if budget.calibrated_ceiling(raw, provider, model) > limit:
        made = yield from _to_ceiling(c, budget, state, specs, (provider, model, api), raw, sent_at)
        if made is not None:
            req, raw, carried, fingerprint = made
        sized = budget.calibrated_ceiling(raw, provider, model)
        if sized > limit:
            c.emit(OverBudget(sized, limit))
            raise ContextOverflowError(
                f"the request needs {sized} calibrated tokens but {ceiling_terms(c, limit)}",
                estimated=sized,
                ceiling=limit,
            )
    extra = _with_context_management(c.options.context_management, provider, api, extra)
    compaction = render_option(c.window, c.options.delegate_compaction, api_for(provider, api))
    if compaction is not None:
        extra = {**extra, "compaction": compaction}
    payload = render_payload(
        req,
        provider,
        api=api,
        model=model,
        max_tokens=max_tokens or c.options.output_reserve or None,
        log=state.render_log,
        **extra,
    )
    if not same:  # a retry renders the same request: its layout decisions were told already
        for event in req.events:
            if isinstance(event, VolatilityObserved):
                c.emit(event)
    state.layout_input, state.layout_fingerprint = carried, fingerprint
    state.layout_state = req.state
    state.last_request = req
    state.last_sent_at = sent_at
    state.last_next_entry = c.window.next_entry
    state.last_estimate = raw
    state.last_provider, state.last_model = provider, model
    return req, payload


def _to_ceiling(
    c: Session,
    budget: EngineBudget,
    state: SessionState,
    specs: Sequence[ToolSpec],
    target: tuple[str, str, str | None],
    raw: int,
    sent_at: float,
) -> Steps[tuple[Request, int, LayoutState | None, str] | None]:
    """A request of ``raw`` tokens over the ceiling (``target``: provider, model, api) brought
    under it with ``auto_compact`` (:func:`lay_out_steps`): compaction to half the allowance,
    the roll-off of the sliding windows compaction cannot shrink, then the newest turn
    trimmed; returns the request laid out again (sent at ``sent_at``, clock seconds), its raw
    estimate, the layout state it carried on from and its fingerprint, or ``None`` when
    nothing was tried."""
    provider, model, api = target
    limit = budget.limit
    factor = budget.calibration.ceiling_factor(budget.calibration_key(provider, model))

    def need() -> int:  # raw tokens to free to reach half the allowance
        return int((budget.calibrated_ceiling(raw, provider, model) - limit // 2) / factor) + 1

    conv = c.window.conversation
    made = None
    for stage in ("compact", "roll off", "turn trim"):
        if not c.options.auto_compact or budget.calibrated_ceiling(raw, provider, model) <= limit:
            break
        if stage == "compact":
            yield from pressure_steps(c, "ceiling", cp.plan_targets(c, need()))
        elif stage == "roll off":
            evict_for_ceiling(c, need())
        elif isinstance(conv, SlidingWindow):  # the newest turn, trimmed to the ceiling
            over = budget.calibrated_ceiling(raw, provider, model) - limit
            turnfit.shorten(c, conv, int(over / factor) + 1)
        fingerprint = request_fingerprint(c, specs, provider, model, api, state.region_hashes)
        carried = state.layout_state  # the window changed: carry on from the last request
        econ = _economics(c, provider, model)
        req = _assemble(c, state, specs, econ, carried, sent_at, _rewrite_outlook(c, econ))
        raw = budget.request_estimate(req, provider)
        made = (req, raw, carried, fingerprint)
    return made


def ceiling_terms(c: Session, limit: int) -> str:
    """What the request ceiling ``limit`` is made of, with the fix (the end of a
    :class:`ContextOverflowError`): the model's context window minus the output reserve, or
    the window's ``max_tokens`` when that is smaller; a reserve that leaves no room in the
    context window is named as the cause."""
    options, window_max = c.options, c.window.max_tokens
    context, reserve = options.context_window, options.output_reserve
    if context is None or window_max <= context - reserve:
        return (
            f"the ceiling is the window's max_tokens, {window_max}; nothing more can be "
            "compacted: release entries or raise the budget"
        )
    made = f"the model's context window {context} minus the output reserve {reserve}"
    if limit <= 0:
        return (
            f"the ceiling is {limit}: {made}; the output reserve leaves no room for a request: "
            "lower the output reserve (output_reserve, the blueprint's max_output_tokens) or "
            "use a model with a larger context window"
        )
    return (
        f"the ceiling is {limit} ({made}; the window's max_tokens is {window_max}); nothing "
        "more can be compacted: release entries or raise the budget"
    )


def _with_context_management(
    value: dict[str, Any] | None, provider: str, api: str | None, extra: Mapping[str, Any]
) -> Mapping[str, Any]:
    """``extra`` plus ``context_management`` when the engine sends it; raises
    :class:`regio.cache.context_editing.ContextEditingError` for an API that has no such field."""
    if value is None:
        return extra
    from regio.cache.context_editing import ContextEditingError

    chosen = api_for(provider, api)
    if chosen != "anthropic":
        raise ContextEditingError(
            f"EngineOptions.context_management is Anthropic's server-side context editing; "
            f"this request renders for {chosen!r} ({provider!r}), which has no such field: "
            "leave context_management unset for this engine, or request provider 'anthropic'"
        )
    return {**extra, "context_management": value}


def observe_usage(
    ledger: UsageLedger,
    budget: EngineBudget,
    state: SessionState,
    emit: Callable[[Event], None],
    usage: object,
    provider: str | None,
    model: str | None,
) -> UsageRecord:
    """Record ``usage`` of the last request (see ``Engine.observe``). Raises
    :class:`regio.errors.UsageError` for a ``provider`` or ``model`` that is not text
    a save can hold, before anything is recorded."""
    provider = provider or state.last_provider or budget.options.provider
    model = model or state.last_model or budget.options.model
    for name, value in (("provider", provider), ("model", model)):
        if not isinstance(value, str) or repair_text(value)[1] is not None:
            raise UsageError(f"observe: {name} must be text without lone surrogates, got {value!r}")
    estimated = state.last_estimate or None
    record = ledger.observe(usage, provider=provider, model=model, estimated=estimated)
    emit(
        UsageObserved(
            record.index,
            provider,
            model,
            record.prompt_tokens,
            record.cache_read_tokens,
            record.cache_creation_tokens,
            record.output_tokens,
            estimated,
            record.cost_usd,
        )
    )
    if record.prompt_tokens > 0 and estimated:
        key = budget.calibration_key(provider, model)
        factor = budget.calibration.observe(key, estimated, record.prompt_tokens)
        emit(CalibrationUpdated(key, factor, estimated, record.prompt_tokens))
    if record.prompt_tokens > 0:
        state.overflow_retry = False
    return record
