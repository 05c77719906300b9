"""The simulator against the provider's recorded usage, on the ``recorded`` requests.

Traces imported with per-call provider usage (:func:`regio.traces.usage.recorded_usage`:
OpenHands trajectories, Claude Code and Codex CLI sessions) let the bench compare its cache
simulation of the ``recorded`` requests with what the provider reported, call by call:
cache-read and prompt tokens, and the cached share (read / prompt).

**Unlogged prefix.** Some logs do not record the system prompt and the tool schemas the agent
sent (the OpenHands trajectories, for one: their first call reports ~3,470 prompt tokens
where the logged messages count ~20). Replayed as logged, those requests are a fraction of
the real ones and usually stay under the provider's minimum cacheable length, so the
simulator reads nothing where the provider read almost everything: a comparison of
different requests. When a trace has neither a system prompt nor tool schemas, the
comparison therefore **estimates the missing constant prefix** from the first call with
recorded usage: ``prefix = its recorded prompt tokens - the replay's count of that request``
(tokens), puts one block of that size (marked like the system prompt a plain request marks)
before every recorded request, simulates them again under the same cache model, and compares
only the **later** calls (the first one fixed the estimate). The estimate assumes the prefix
was the same on every call; it is stored as ``unlogged_prefix_tokens`` and printed. The prefix
is then cached on both sides by construction (it is most of each read on short traces), so
the reads **beyond the prefix** (each call's read minus the prefix, per trace) are reported
beside the totals: they are the part of the reads the simulator decided.

The trace is **not comparable** (``comparable=False``, with the ``reason`` printed) when no
call is left to compare (the only call with usage fixed the estimate) or the recorded prompt
of the first call is not larger than the replay's count (the log does not hold what was
sent).

**Added tokens**: independently of any prefix, over consecutive calls that both recorded
usage, the growth of the recorded prompt (``prompt_i - prompt_{i-1}``, the recorded
``cache_read + cache_write + input`` tokens) against the growth of the replayed request (the
tokens of the messages added in between, as regio counts them). This is the part of the
request both sides see; a gap here is the tokenizer or what the log kept of the messages.
Gaps of different traces can cancel in a total, so they are printed per trace.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from regio.bench.replay import ReplayOutput
from regio.bench.report import ModelResult, UsageAgreement
from regio.cache.types import CacheBlock, CacheRequest, Mark
from regio.content import content_hash
from regio.providers import cache_model_for
from regio.traces.format import SystemPrompt, Trace, Usage
from regio.traces.usage import recorded_usage

__all__ = ["prefix_is_unlogged", "usage_agreement", "with_prefix"]


def prefix_is_unlogged(trace: Trace) -> bool:
    """True when ``trace`` records neither a system prompt nor tool schemas (the agent sent
    them, the log did not keep them)."""
    return not trace.header.tools and not any(isinstance(e, SystemPrompt) for e in trace.events)


def with_prefix(request: CacheRequest, tokens: int, scope: str) -> CacheRequest:
    """``request`` with one ``tokens``-token system block first (the same digest for every
    request of ``scope``, so it is one cached prefix), marked with the TTL of the request's
    last mark (``"5m"`` without one), as a plain request marks its system prompt."""
    mark: Mark = next((b.mark for b in reversed(request.blocks) if b.mark is not None), "5m")
    block = CacheBlock(
        tokens, content_hash(["unlogged-prefix", scope]), "text", "system", mark, role="system"
    )
    return msgspec.structs.replace(request, blocks=(block, *request.blocks))


def _added(
    usages: Sequence[Usage | None], sizes: Sequence[int], calls: Sequence[int]
) -> tuple[int, int, int]:
    """(pairs, recorded growth, replayed growth) over consecutive calls with usage."""
    pairs = rec = sim = 0
    for i in calls:
        before = usages[i - 1] if i > 0 else None
        now = usages[i]
        if before is None or now is None or before.prompt_tokens <= 0:
            continue
        pairs += 1
        rec += now.prompt_tokens - before.prompt_tokens
        sim += sizes[i] - sizes[i - 1]
    return pairs, rec, sim


def _not_comparable(name: str, reason: str, prefix: int = 0) -> UsageAgreement:
    return UsageAgreement(
        cache_model=name,
        requests=0,
        recorded_prompt_tokens=0,
        simulated_prompt_tokens=0,
        recorded_read_tokens=0,
        simulated_read_tokens=0,
        mean_share_error=0.0,
        comparable=False,
        reason=reason,
        unlogged_prefix_tokens=prefix,
    )


def usage_agreement(
    trace: Trace, out: ReplayOutput, models: Sequence[ModelResult]
) -> UsageAgreement | None:
    """Compare the ``recorded`` requests' simulated usage with the usage the provider
    recorded (module doc), under the first cache model of the recorded provider (else the
    first cache model). ``None`` without recorded usage or without the ``recorded`` run."""
    usages = recorded_usage(trace)
    if "recorded" not in out.runs or not any(u is not None for u in usages) or not models:
        return None
    provider = next((u.provider for u in usages if u is not None and u.provider), None)
    model = next((m for m in models if provider and m.cache_model.startswith(provider)), models[0])
    requests = out.runs["recorded"].requests
    sizes = [sum(b.tokens for b in r.blocks) for r in requests]
    recorded = {
        i: u for i, u in enumerate(usages[: len(sizes)]) if u is not None and u.prompt_tokens > 0
    }
    usable = list(recorded)
    if not usable:
        return None
    prefix = 0
    sim = model.layout("recorded")
    reads, prompts = list(sim.read_per_request), list(sim.prompt_per_request)
    if prefix_is_unlogged(trace):
        first = usable[0]
        recorded_first = recorded[first].prompt_tokens
        prefix = recorded_first - sizes[first]
        if prefix <= 0:
            return _not_comparable(
                model.cache_model,
                f"no system prompt or tool schemas logged, and the first recorded prompt "
                f"({recorded_first} tokens) is not larger than the replayed request "
                f"({sizes[first]} tokens): the log does not hold what was sent",
            )
        usable = usable[1:]
        if not usable:
            return _not_comparable(
                model.cache_model,
                "no system prompt or tool schemas logged, and the only call with recorded "
                "usage is the one that estimates them: nothing left to compare",
                prefix,
            )
        padded = [with_prefix(r, prefix, trace.id) for r in requests]
        report = cache_model_for(model.cache_model).run(padded)
        reads = [o.read for o in report.outcomes]
        prompts = [o.prompt_tokens for o in report.outcomes]
    pairs = [(recorded[i], reads[i], prompts[i]) for i in usable if prompts[i] > 0]
    error = sum(abs(r / n - u.cached_tokens / u.prompt_tokens) for u, r, n in pairs) / max(
        1, len(pairs)
    )
    added = _added(usages, sizes, usable)
    return UsageAgreement(
        cache_model=model.cache_model,
        requests=len(pairs),
        recorded_prompt_tokens=sum(u.prompt_tokens for u, _, _ in pairs),
        simulated_prompt_tokens=sum(n for _, _, n in pairs),
        recorded_read_tokens=sum(u.cached_tokens for u, _, _ in pairs),
        simulated_read_tokens=sum(r for _, r, _ in pairs),
        mean_share_error=error,
        unlogged_prefix_tokens=prefix,
        added_pairs=added[0],
        recorded_added_tokens=added[1],
        simulated_added_tokens=added[2],
        recorded_beyond_prefix_tokens=sum(u.cached_tokens - prefix for u, _, _ in pairs),
        simulated_beyond_prefix_tokens=sum(r - prefix for _, r, _ in pairs),
    )
