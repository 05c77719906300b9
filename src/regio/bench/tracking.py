"""Per-strategy bookkeeping of a replay: the requests, summarizer calls, broken requests,
first cut and retention meter of one strategy (:class:`Tracker`), and what it yields
(:class:`StrategyRun`). Used by :func:`regio.bench.replay.replay`.

**Broken** is one rule for every strategy, regio's included: a model call is broken when its
request lost the task (no task message and no summary standing for it), when its request (or
a provider's compaction pass sent within it) holds more prompt tokens than the window allows
(``prompt tokens > context window - max output tokens``: the API would refuse it, whoever
sent it), or when the strategy raised and so sent nothing from that call on. Each call counts
once, whatever the reasons (:meth:`Tracker.run`)."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from regio.bench.report import ReliefStage
from regio.bench.retention import RetentionMeter
from regio.cache.types import CacheRequest

__all__ = ["StrategyRun", "Tracker", "prompt_tokens"]


@attrs.frozen
class StrategyRun:
    """One strategy on one trace. ``requests``: its model calls; ``compaction_requests``:
    its summarizer calls as requests; ``summarizer``: ``"none"`` (never summarizes),
    ``"offline"`` (an extractive summarizer not billed), ``"llm"`` (billed requests) or
    ``"provider"`` (the provider's compaction passes); ``compaction_calls``: summarizer
    calls; ``broken_requests``: the calls that are broken (module doc; each call once),
    ``lost_task_requests`` / ``over_window_requests`` / ``unsent_requests`` the calls broken
    for each reason (they may overlap); ``failure``: the error that stopped the strategy
    (``"RegionFullError: ..."``) and ``failed_at`` the model call it stopped at (``None``: it
    ran to the end); ``retention``: :meth:`RetentionMeter.result` from the run's common first
    call or ``None``; ``retention_observations``: its denominators (probe type -> probe
    observations counted, the same for every strategy of one run); ``first_cut``: the first
    model call at which this strategy had cut something (``None``: never); ``relief``: the
    relief chain's stage tallies (regio strategies whose blueprint enables it);
    ``fork_requests``: see below. ``compactions``: the compactions it committed, by the
    region compacted and the reason its compaction was queued (``"conversation:room"``,
    ``"conversation_history:history_over_budget"`` for a merge of summaries, ...; regio
    strategies, empty for the others)."""

    requests: list[CacheRequest]
    compaction_requests: list[CacheRequest] = attrs.field(factory=list)
    summarizer: str = "none"
    compaction_calls: int = 0
    broken_requests: int = 0
    retention: dict[str, float] | None = None
    relief: tuple[ReliefStage, ...] = ()
    retention_observations: dict[str, int] | None = None
    first_cut: int | None = None
    #: summarizer calls sent as forks of the agent's last request, priced in the agent's own
    #: cache scope with :attr:`requests` (:mod:`regio.bench.billing`), and a provider's
    #: compaction passes (:mod:`regio.bench.peers.providers`)
    fork_requests: list[CacheRequest] = attrs.field(factory=list)
    lost_task_requests: int = 0
    over_window_requests: int = 0
    unsent_requests: int = 0
    failure: str | None = None
    failed_at: int | None = None
    compactions: dict[str, int] = attrs.field(factory=dict)


@attrs.define
class Tracker:
    """Per strategy: its requests, the calls that lost the task (``lost``) or sent a pass over
    the window (``over``, beside the requests :meth:`run` checks), the failure that stopped it
    (``failure``, ``failed_at``), compaction flag (``compacted``: it has cut something;
    ``first_cut``: the first call at which it had), retention meter and committed
    compactions by ``"region:reason"`` (``compactions``, :class:`StrategyRun`)."""

    meter: RetentionMeter
    requests: list[CacheRequest] = attrs.field(factory=list)
    compaction_requests: list[CacheRequest] = attrs.field(factory=list)
    fork_requests: list[CacheRequest] = attrs.field(factory=list)
    summarizer: str = "none"
    compaction_calls: int = 0
    lost: set[int] = attrs.field(factory=set)
    over: set[int] = attrs.field(factory=set)
    failure: str | None = None
    failed_at: int | None = None
    compacted: bool = False
    first_cut: int | None = None
    relief: tuple[ReliefStage, ...] = ()
    compactions: dict[str, int] = attrs.field(factory=dict)

    def seen(self, call: int, has_task: bool, summary: bool, text: Callable[[], str]) -> None:
        """Account for request ``call``: broken when it has neither the task nor a summary;
        ``text()`` (the request's text) is measured on every sampled request, whether or not
        this strategy has cut yet (the run picks the common first call afterwards)."""
        if not has_task and not summary:
            self.lost.add(call)
        if self.compacted and self.first_cut is None:
            self.first_cut = call
        if self.meter.wants(call):
            self.meter.observe(call, text())

    def fail(self, call: int, exc: BaseException) -> None:
        """The strategy raised ``exc`` at model call ``call``: it sends nothing from there on."""
        if self.failure is None:
            self.failure = f"{type(exc).__name__}: {exc}"
            self.failed_at = call

    def run(self, since: int | None, limit: int | None = None, calls: int = 0) -> StrategyRun:
        """The strategy's run, its retention scored from model call ``since`` (``None``:
        not scored); ``limit``: the most prompt tokens a request may hold (``None``: not
        checked); ``calls``: the trace's model calls (those from ``failed_at`` on were never
        sent)."""
        scored = since is not None and self.meter.result(since) is not None
        over = set(self.over)
        if limit is not None:
            over.update(int(r.id) for r in self.requests if prompt_tokens(r) > limit)
        unsent = set(range(self.failed_at, calls)) if self.failed_at is not None else set()
        broken = self.lost | over | unsent
        return StrategyRun(
            self.requests,
            self.compaction_requests,
            self.summarizer,
            self.compaction_calls,
            len(broken),
            self.meter.result(since or 0) if scored else None,
            self.relief,
            self.meter.observations(since or 0) if scored else None,
            self.first_cut,
            self.fork_requests,
            len(self.lost),
            len(over),
            len(unsent),
            self.failure,
            self.failed_at,
            dict(sorted(self.compactions.items())),
        )


def prompt_tokens(request: CacheRequest) -> int:
    """Prompt tokens of ``request`` (the sum of its blocks)."""
    return sum(b.tokens for b in request.blocks)
