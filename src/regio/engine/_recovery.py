"""Overflow recovery.

A provider refusal for length triggers one compaction to half the allowance and one retry:

1. :func:`regio.providers.overflow.classify_overflow` decides; anything else is not touched (an
   exception is re-raised as is).
2. When the provider reported the prompt size, it is one observation of the calibration of
   ``provider:model`` (bounded, :class:`regio.tokens.Calibration`), and this recovery scales
   its estimates by the larger of the calibrated factor and the bounded ratio of the report
   (at most ``Calibration.max_ratio``, default 4), never by the raw ratio.
3. Compactable content is compacted toward half the allowance (``limit // 2``, calibrated),
   working notes first, the conversation last, pass after pass while a pass frees tokens
   (at most :data:`MAX_RECOVERY_PASSES`). Recovery succeeds when the calibrated size is then
   at most the ceiling (``limit``), even if it is still above half of it.
4. A :class:`RetryToken` tells the caller to retry once. A second refusal before a successful
   call (or a refusal with compaction off, or nothing left to compact) raises
   :class:`ContextOverflowError` with the numbers and the provider's error attached.

Only the prompt view shrinks; the transcript keeps everything.
"""

from __future__ import annotations

import msgspec

from regio.compaction import _flush as cp
from regio.compaction._flushes import pressure_steps
from regio.errors import ContextOverflowError
from regio.providers.overflow import OverflowInfo, classify_overflow
from regio.session._budget import EngineBudget
from regio.session._events import OverflowFailed, OverflowRecovered
from regio.session._session import Session, Steps
from regio.session._state import SessionState

__all__ = ["MAX_RECOVERY_PASSES", "RetryToken", "recover_steps"]

#: Most compaction passes of one overflow recovery.
MAX_RECOVERY_PASSES = 4


def _merged(first: cp.CompactionResult, later: cp.CompactionResult) -> cp.CompactionResult:
    """One result for two passes: ids and summaries of both, sizes from first to last."""
    return msgspec.structs.replace(
        first,
        replaced_ids=first.replaced_ids + later.replaced_ids,
        kept_ids=later.kept_ids,
        tokens_after=later.tokens_after,
        summary_ids=first.summary_ids + later.summary_ids,
        summarizer_calls=first.summarizer_calls + later.summarizer_calls,
        rejected=first.rejected + later.rejected,
    )


class RetryToken(msgspec.Struct, frozen=True):
    """Retry the failed call once. ``info`` is the recognised refusal; ``tokens_before`` /
    ``tokens_after`` the calibrated size of the prompt before and after the compaction;
    ``ceiling`` the engine's limit (tokens); ``compaction`` what was compacted."""

    info: OverflowInfo
    tokens_before: int
    tokens_after: int
    ceiling: int
    compaction: cp.CompactionResult | None = None


def _bounded_ratio(budget: EngineBudget, raw: int, info: OverflowInfo) -> float:
    """The reported / estimated ratio of this refusal, bounded as one calibration observation
    is (``[1, Calibration.max_ratio]``, default 4): one report far above the estimate (250k
    for a 694-token prompt) must not make this recovery aim at an impossible size."""
    assert info.reported is not None
    return min(max(info.reported / raw, 1.0), budget.calibration.max_ratio)


def _fail(
    c: Session, budget: EngineBudget, info: OverflowInfo, error: object, reason: str, estimated: int
) -> None:
    c.emit(OverflowFailed(info.reported, info.maximum, estimated, reason))
    raise ContextOverflowError(
        f"the provider refused the request for length ({reason}): reported "
        f"{info.reported if info.reported is not None else 'unknown'} tokens, maximum "
        f"{info.maximum if info.maximum is not None else 'unknown'}; the engine estimated "
        f"{estimated} against a ceiling of {budget.limit}",
        reported=info.reported,
        maximum=info.maximum,
        estimated=estimated,
        ceiling=budget.limit,
        provider_error=error,
    ) from (error if isinstance(error, BaseException) else None)


def recover_steps(
    c: Session, budget: EngineBudget, state: SessionState, error: object
) -> Steps[RetryToken | None]:
    """Answer ``error`` (module doc): compact toward half the allowance and return a
    :class:`RetryToken`, return ``None`` / re-raise for anything that is not a length refusal,
    or raise :class:`ContextOverflowError`. A step generator: ``Engine.recover_overflow``
    drives it synchronously, ``Engine.arecover_overflow`` awaiting the summarizer."""
    info = classify_overflow(error)
    if info is None:
        if isinstance(error, BaseException):
            raise error
        return None
    provider = state.last_provider or c.options.provider
    model = state.last_model or c.options.model
    key = budget.calibration_key(provider, model)
    raw = state.last_estimate or budget.estimate(provider, model)
    if state.overflow_retry:
        _fail(c, budget, info, error, "second refusal after a compaction and retry", raw)
    if not c.options.auto_compact:
        _fail(c, budget, info, error, "compaction is off", raw)
    # rescale: the failed request measured ``reported`` where the engine estimated ``raw``
    scale = budget.calibration.factor(key)
    if info.reported is not None and raw > 0:
        budget.calibration.observe(key, raw, info.reported)
        scale = max(scale, budget.calibration.factor(key), _bounded_ratio(budget, raw, info))
    current = budget.estimate(provider, model)
    before = info.reported if info.reported is not None else int(current * scale)
    goal = budget.limit // 2
    need = int((current * scale - goal) / scale) + 1 if current * scale > goal else 0
    result = None
    passes = 0
    while need > 0 and passes < MAX_RECOVERY_PASSES:
        passes += 1
        done = yield from pressure_steps(c, "overflow", cp.plan_targets(c, need))
        if done is None or done.freed <= 0:
            break
        result = done if result is None else _merged(result, done)
        current = budget.estimate(provider, model)
        need = int((current * scale - goal) / scale) + 1 if current * scale > goal else 0
    after = int(budget.estimate(provider, model) * scale + 0.999999)
    if after > budget.limit or (result is None and need > 0):
        _fail(c, budget, info, error, "nothing left to compact", after)
    state.overflow_retry = True
    c.emit(OverflowRecovered(info.reported, info.maximum, before, after, scale))
    return RetryToken(
        info=info, tokens_before=before, tokens_after=after, ceiling=budget.limit, compaction=result
    )
