"""Requests and their usage: :func:`lay_out` (layout, ceiling check, renderer) and
:func:`observe_usage` (usage ledger and calibration) -- the request half of
:class:`regio.runtime.Engine`, working on its parts."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from regio.events import Event
from regio.layout import Request, ToolSpec, assemble

from . import compaction as cp
from .budget import EngineBudget
from .compactor import Compactor
from .errors import ContextOverflowError
from .events import CalibrationUpdated, OverBudget, UsageObserved
from .flushing import pressure_steps
from .render import render_payload
from .state import SessionState
from .usage import UsageLedger, UsageRecord

__all__ = ["lay_out", "observe_usage"]


def _assemble(
    c: Compactor, state: SessionState, specs: Sequence[ToolSpec], provider: str, model: str
) -> Request:
    options = c.options
    return assemble(
        c.window,
        options.strategy,
        tools=specs,
        state=state.layout_state,
        ttl=options.ttl,
        model=model or None,
        provider=provider or options.provider or None,
        chunk_tokens=options.chunk_tokens,
        settle_share=options.settle_share,
        session_id=options.session_id,
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
    ``auto_compact``) and laid out again; still over: :class:`ContextOverflowError`. Keeps the
    layout state, request and raw estimate in ``state``."""
    specs = budget.tool_specs(tools)
    req = _assemble(c, state, specs, provider, model)
    raw = budget.request_estimate(req)
    limit = budget.limit
    if budget.calibrated(raw, provider, model) > limit:
        if c.options.auto_compact:
            factor = budget.calibration.factor(budget.calibration_key(provider, model))
            need = int((budget.calibrated(raw, provider, model) - limit // 2) / factor) + 1
            c.run(pressure_steps(c, "ceiling", cp.plan_targets(c, need)))
            req = _assemble(c, state, specs, provider, model)
            raw = budget.request_estimate(req)
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
    payload = render_payload(
        req,
        provider,
        api=api,
        model=model,
        max_tokens=max_tokens or c.options.output_reserve or None,
        **extra,
    )
    state.layout_state = req.state
    state.last_request = req
    state.last_estimate = raw
    state.last_provider, state.last_model = provider, model
    return req, payload


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
