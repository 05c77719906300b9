"""Requests and their usage: :func:`lay_out` (layout, ceiling check, renderer) and
:func:`observe_usage` (usage ledger and calibration) -- the request half of
:class:`regio.runtime.Engine`, working on its parts."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from regio.events import Event
from regio.layout import LayoutState, Request, ToolSpec, assemble
from regio.providers import economics_for
from regio.regions import SlidingWindow

from . import compaction as cp
from . import turnfit
from .budget import EngineBudget
from .compactor import Compactor
from .errors import ContextOverflowError
from .events import CalibrationUpdated, OverBudget, UsageObserved
from .flushing import pressure_steps
from .render import api_for, render_payload
from .state import RegionHashes, SessionState
from .usage import UsageLedger, UsageRecord

__all__ = ["lay_out", "observe_usage", "request_fingerprint"]


def request_fingerprint(
    c: Compactor,
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
    c: Compactor,
    state: SessionState,
    specs: Sequence[ToolSpec],
    provider: str,
    model: str,
    carried: LayoutState | None,
) -> Request:
    options = c.options
    return assemble(
        c.window,
        options.strategy,
        tools=specs,
        state=carried,
        ttl=options.ttl,
        economics=economics_for(provider or options.provider or None, model or None),
        chunk_tokens=options.chunk_tokens,
        settle_share=options.settle_share,
        session_id=options.session_id,
        log=state.render_log,
    )


def lay_out(
    c: Compactor,
    budget: EngineBudget,
    state: SessionState,
    provider: str,
    model: str,
    *,
    tools: Sequence[ToolSpec],
    api: str | None,
    max_tokens: int | None,
    extra: Mapping[str, Any],
) -> tuple[Request, dict[str, Any]]:
    """Lay the window out for ``provider`` / ``model`` and render the payload. A request whose
    calibrated size is over ``budget.limit`` is compacted to half the allowance (with
    ``auto_compact``), then, when the newest turn, which compaction never takes, still does
    not fit, that turn's results are trimmed (:func:`regio.runtime.turnfit.shorten`), and it
    is laid out again; still over: :class:`ContextOverflowError`. Keeps the
    layout state, request and raw estimate in ``state``.

    Same state, same bytes: when :func:`request_fingerprint` equals the last request's (a
    retry, or a second call with nothing changed), the layout starts again from the layout
    state the last request started from, so the payload, cache markers included, is the same
    byte for byte (the layout's breakpoint planning reads the previous request's marks)."""
    specs = budget.tool_specs(tools)
    fingerprint = request_fingerprint(c, specs, provider, model, api, state.region_hashes)
    same = fingerprint == state.layout_fingerprint
    carried = state.layout_input if same else state.layout_state
    req = _assemble(c, state, specs, provider, model, carried)
    raw = budget.request_estimate(req, provider)
    measured = budget.layout_tokens
    if budget.measure_layout(raw, provider) > measured:
        budget.reserve(provider, model)  # the next admissions leave the layout's share free
    limit = budget.limit
    if budget.calibrated(raw, provider, model) > limit:
        if c.options.auto_compact:
            factor = budget.calibration.factor(budget.calibration_key(provider, model))
            need = int((budget.calibrated(raw, provider, model) - limit // 2) / factor) + 1
            c.run(pressure_steps(c, "ceiling", cp.plan_targets(c, need)))
            carried = state.layout_state  # the window changed: carry on from the last request
            req = _assemble(c, state, specs, provider, model, carried)
            raw = budget.request_estimate(req, provider)
            over = budget.calibrated(raw, provider, model) - limit
            conv = c.window.conversation
            if over > 0 and isinstance(conv, SlidingWindow):  # the newest turn, trimmed
                turnfit.shorten(c, conv, int(over / factor) + 1)
                req = _assemble(c, state, specs, provider, model, carried)
                raw = budget.request_estimate(req, provider)
            fingerprint = request_fingerprint(c, specs, provider, model, api, state.region_hashes)
        sized = budget.calibrated(raw, provider, model)
        if sized > limit:
            c.emit(OverBudget(sized, limit))
            raise ContextOverflowError(
                f"the request needs {sized} calibrated tokens but the ceiling is {limit} "
                f"(window {c.window.max_tokens}, output reserve {c.options.output_reserve}); "
                "nothing more can be compacted: release entries or raise the budget",
                estimated=sized,
                ceiling=limit,
            )
    extra = _with_context_management(c.options.context_management, provider, api, extra)
    payload = render_payload(
        req,
        provider,
        api=api,
        model=model,
        max_tokens=max_tokens or c.options.output_reserve or None,
        log=state.render_log,
        **extra,
    )
    state.layout_input, state.layout_fingerprint = carried, fingerprint
    state.layout_state = req.state
    state.last_request = req
    state.last_sent_at = float(c.clock())
    state.last_next_entry = c.window.next_entry
    state.last_estimate = raw
    state.last_provider, state.last_model = provider, model
    return req, payload


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
    usage: Any,
    provider: str | None,
    model: str | None,
) -> UsageRecord:
    """Record ``usage`` of the last request (see ``Engine.observe``)."""
    provider = provider or state.last_provider or budget.options.provider
    model = model or state.last_model or budget.options.model
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
