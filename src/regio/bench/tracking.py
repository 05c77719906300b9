"""Per-strategy bookkeeping of a replay: the requests, summarizer calls, broken requests,
first cut and retention meter of one strategy (:class:`Tracker`), and what it yields
(:class:`StrategyRun`). Used by :func:`regio.bench.replay.replay`."""

from __future__ import annotations

from typing import Any

import attrs

from regio.bench.report import ReliefStage
from regio.bench.retention import RetentionMeter
from regio.cache.types import CacheRequest

__all__ = ["StrategyRun", "Tracker"]


@attrs.frozen
class StrategyRun:
    """One strategy on one trace. ``requests``: its model calls; ``compaction_requests``:
    its summarizer calls as requests; ``summarizer``: ``"none"`` (never summarizes),
    ``"offline"`` (an extractive summarizer not billed) or ``"llm"`` (billed
    requests); ``compaction_calls``: summarizer calls; ``broken_requests``: requests that
    lost the task; ``retention``: :meth:`RetentionMeter.result` from the run's common first
    call or ``None``; ``retention_observations``: its denominators (probe type -> probe
    observations counted, the same for every strategy of one run); ``first_cut``: the first
    model call at which this strategy had cut something (``None``: never); ``relief``: the
    relief chain's stage tallies (regio strategies whose blueprint enables it);
    ``fork_requests``: see below."""

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
    #: cache scope with :attr:`requests` (:mod:`regio.bench.billing`)
    fork_requests: list[CacheRequest] = attrs.field(factory=list)


@attrs.define
class Tracker:
    """Per strategy: its requests, broken count, compaction flag (``compacted``: it has cut
    something; ``first_cut``: the first call at which it had) and retention meter."""

    meter: RetentionMeter
    requests: list[CacheRequest] = attrs.field(factory=list)
    compaction_requests: list[CacheRequest] = attrs.field(factory=list)
    fork_requests: list[CacheRequest] = attrs.field(factory=list)
    summarizer: str = "none"
    compaction_calls: int = 0
    broken: int = 0
    compacted: bool = False
    first_cut: int | None = None
    relief: tuple[ReliefStage, ...] = ()

    def seen(self, call: int, has_task: bool, summary: bool, text: Any) -> None:
        """Account for request ``call``: broken when it has neither the task nor a summary;
        ``text()`` (the request's text) is measured on every sampled request, whether or not
        this strategy has cut yet (the run picks the common first call afterwards)."""
        if not has_task and not summary:
            self.broken += 1
        if self.compacted and self.first_cut is None:
            self.first_cut = call
        if self.meter.wants(call):
            self.meter.observe(call, text())

    def run(self, since: int | None) -> StrategyRun:
        """The strategy's run, its retention scored from model call ``since`` (``None``:
        not scored)."""
        scored = since is not None and self.meter.result(since) is not None
        return StrategyRun(
            self.requests,
            self.compaction_requests,
            self.summarizer,
            self.compaction_calls,
            self.broken,
            self.meter.result(since or 0) if scored else None,
            self.relief,
            self.meter.observations(since or 0) if scored else None,
            self.first_cut,
            self.fork_requests,
        )
