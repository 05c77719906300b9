"""``/metrics``: the proxy's counters in the Prometheus text format (prometheus-client).

Each worker has its own registry (a ``CollectorRegistry`` per app, never the process-global
one) and counts the requests it served, so a scraper collects each worker and sums them, as
Prometheus expects of several processes. The cost counters and the other figures of
:meth:`ProxyMetrics.record` count the requests whose work was committed, as the status page
does; the summary requests' counts and tokens (:meth:`ProxyMetrics.summarized`) count every
request's, committed or not (the upstream billed them all the same). Names, each per
``session`` (the session id):

========================================  ===================================================
``regio_requests_total``                  requests (label ``api``; ``status`` the upstream's)
``regio_client_tokens_total``             tokens the client sent (its whole history, each time)
``regio_upstream_tokens_total``           tokens sent upstream (regio's estimate of the window)
``regio_tokens_saved_total``              client tokens minus upstream tokens
``regio_prompt_tokens_total``             prompt tokens the upstream reported
``regio_cache_read_tokens_total``         cache reads, ``source`` = ``reported`` | ``predicted``
``regio_cache_write_tokens_total``        cache writes, ``source`` = ``reported`` | ``predicted``
``regio_cost_usd_total``                  cost of the reported usage (cache rules' prices):
                                          the requests whose cost, with their summary
                                          requests', has a price (``RequestStat.
                                          total_cost_usd``); a request some part of which
                                          has none adds nothing, never its priced parts, and
                                          is counted in ``regio_unpriced_requests_total``
                                          and/or ``regio_summary_unpriced_total``
``regio_unpriced_requests_total``         client requests whose cost has no price (a price
                                          their tokens need is not recorded)
``regio_as_is_cost_usd_total``            the same requests with the client's history as is
``regio_as_is_unpriced_total``            requests whose as-is cost has no price
``regio_compactions_total``               requests in which a compaction ran
``regio_repairs_total``                   changes the repair made to what a client sent (label
                                          ``action``: ``call_closed``, ``orphan_result_dropped``,
                                          ``call_renamed``, ... of ``Engine.repair``)
``regio_restores_total``                  regio tool calls the proxy answered itself
``regio_first_cache_miss_total``          requests whose first uncached block was ``region``'s
``regio_branches_total``                  sessions started as a branch of another
``regio_passthrough_total``               requests sent upstream unmanaged (label ``reason``,
                                          one of ``regio.proxy.errors.PASSTHROUGH_REASONS``)
``regio_summary_requests_total``          ``--summarizer upstream``: summaries by ``result``:
                                          ``ok`` (the upstream model wrote it), ``fallback``
                                          (its call failed or the engine refused its summary:
                                          the offline summarizer wrote it),
                                          ``overflow`` (refused for length: retried in chunks)
``regio_summary_input_tokens_total``      input tokens of the summary requests (reported)
``regio_summary_output_tokens_total``     output tokens of the summary requests (reported)
``regio_summary_cost_usd_total``          the summary requests' part of ``regio_cost_usd_total``
``regio_summary_unpriced_total``          summary requests whose model has no price (their
                                          cost, and their client request's, is in no counter)
``regio_added_cpu_seconds``               histogram: the proxy's own CPU time per request
========================================  ===================================================
"""

from __future__ import annotations

import attrs
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from .records import RequestStat
from .summaries import SummaryTally

__all__ = ["CONTENT_TYPE", "ProxyMetrics"]

CONTENT_TYPE = CONTENT_TYPE_LATEST


@attrs.define
class ProxyMetrics:
    """One worker's counters (module doc)."""

    registry: CollectorRegistry = attrs.field(factory=lambda: CollectorRegistry(auto_describe=True))
    requests: Counter = attrs.field(init=False)
    client_tokens: Counter = attrs.field(init=False)
    upstream_tokens: Counter = attrs.field(init=False)
    saved: Counter = attrs.field(init=False)
    prompt: Counter = attrs.field(init=False)
    cache_read: Counter = attrs.field(init=False)
    cache_write: Counter = attrs.field(init=False)
    cost: Counter = attrs.field(init=False)
    as_is: Counter = attrs.field(init=False)
    unpriced: Counter = attrs.field(init=False)
    as_is_unpriced: Counter = attrs.field(init=False)
    compactions: Counter = attrs.field(init=False)
    repairs: Counter = attrs.field(init=False)
    restores: Counter = attrs.field(init=False)
    first_miss: Counter = attrs.field(init=False)
    branches: Counter = attrs.field(init=False)
    passthrough: Counter = attrs.field(init=False)
    summaries: Counter = attrs.field(init=False)
    summary_input: Counter = attrs.field(init=False)
    summary_output: Counter = attrs.field(init=False)
    summary_cost: Counter = attrs.field(init=False)
    summary_unpriced: Counter = attrs.field(init=False)
    cpu: Histogram = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        r, s = self.registry, ["session"]
        self.requests = Counter(
            "regio_requests", "Requests served.", [*s, "api", "status"], registry=r
        )
        self.client_tokens = Counter(
            "regio_client_tokens", "Tokens the client sent.", s, registry=r
        )
        self.upstream_tokens = Counter(
            "regio_upstream_tokens", "Tokens sent upstream.", s, registry=r
        )
        self.saved = Counter(
            "regio_tokens_saved", "Client tokens minus upstream tokens.", s, registry=r
        )
        self.prompt = Counter("regio_prompt_tokens", "Reported prompt tokens.", s, registry=r)
        self.cache_read = Counter(
            "regio_cache_read_tokens", "Cache reads.", [*s, "source"], registry=r
        )
        self.cache_write = Counter(
            "regio_cache_write_tokens", "Cache writes.", [*s, "source"], registry=r
        )
        self.cost = Counter("regio_cost_usd", "Cost of the reported usage.", s, registry=r)
        self.as_is = Counter(
            "regio_as_is_cost_usd", "Cost with the client's history as is.", s, registry=r
        )
        self.unpriced = Counter(
            "regio_unpriced_requests", "Requests whose cost has no price.", s, registry=r
        )
        self.as_is_unpriced = Counter(
            "regio_as_is_unpriced", "Requests whose as-is cost has no price.", s, registry=r
        )
        self.compactions = Counter("regio_compactions", "Requests that compacted.", s, registry=r)
        self.repairs = Counter(
            "regio_repairs",
            "Changes the repair made to a client's history.",
            [*s, "action"],
            registry=r,
        )
        self.restores = Counter("regio_restores", "regio tool calls answered.", s, registry=r)
        self.first_miss = Counter(
            "regio_first_cache_miss", "First uncached block's region.", [*s, "region"], registry=r
        )
        self.branches = Counter("regio_branches", "Sessions started as branches.", s, registry=r)
        self.passthrough = Counter(
            "regio_passthrough", "Requests sent unmanaged.", ["reason"], registry=r
        )
        self.summaries = Counter(
            "regio_summary_requests", "Summaries by who wrote them.", [*s, "result"], registry=r
        )
        self.summary_input = Counter(
            "regio_summary_input_tokens", "Input tokens of summary requests.", s, registry=r
        )
        self.summary_output = Counter(
            "regio_summary_output_tokens", "Output tokens of summary requests.", s, registry=r
        )
        self.summary_cost = Counter(
            "regio_summary_cost_usd", "Cost of the summary requests.", s, registry=r
        )
        self.summary_unpriced = Counter(
            "regio_summary_unpriced", "Summary requests of a model without a price.", s, registry=r
        )
        self.cpu = Histogram(
            "regio_added_cpu_seconds",
            "The proxy's CPU time per request.",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
            registry=r,
        )

    def record(self, session: str, api: str, stat: RequestStat) -> None:
        """Count one served request."""
        self.requests.labels(session, api, str(stat.status)).inc()
        self.client_tokens.labels(session).inc(stat.client_tokens)
        self.upstream_tokens.labels(session).inc(stat.upstream_tokens)
        self.saved.labels(session).inc(max(0, stat.client_tokens - stat.upstream_tokens))
        self.prompt.labels(session).inc(stat.prompt_tokens)
        self.cache_read.labels(session, "reported").inc(stat.cache_read)
        self.cache_write.labels(session, "reported").inc(stat.cache_write)
        if stat.predicted_read is not None:
            self.cache_read.labels(session, "predicted").inc(stat.predicted_read)
            self.cache_write.labels(session, "predicted").inc(stat.predicted_write or 0)
        if stat.cost_usd is None:
            self.unpriced.labels(session).inc()
        if stat.summary_unpriced:
            self.summary_unpriced.labels(session).inc(stat.summary_unpriced)
        cost = stat.total_cost_usd  # None once a part is unpriced: then no part is added
        if cost is not None:
            self.cost.labels(session).inc(cost)
            if stat.summary_calls:
                self.summary_cost.labels(session).inc(stat.summary_cost_usd or 0.0)
        if stat.as_is_cost_usd is None:
            self.as_is_unpriced.labels(session).inc()
        else:
            self.as_is.labels(session).inc(stat.as_is_cost_usd)
        self.compactions.labels(session).inc(int(stat.compacted))
        for action, n in stat.repaired.items():
            self.repairs.labels(session, action).inc(n)
        self.restores.labels(session).inc(stat.restores)
        if stat.first_miss is not None:
            self.first_miss.labels(session, stat.first_miss).inc()
        self.cpu.observe(stat.added_ms / 1000.0)

    def refused(self, session: str, api: str, status: int = 400) -> None:
        """Count one request refused, by the engine (400) or the upstream (``status``), whose
        nothing was committed (summaries written while it tried are counted by
        :meth:`summarized`): ``regio_requests_total`` with that status, nothing else."""
        self.requests.labels(session, api, str(status)).inc()

    def summarized(self, session: str, tally: SummaryTally) -> None:
        """Count one request's summary calls (also when the request was not committed: the
        upstream was asked, and billed, all the same)."""
        if not (tally.calls or tally.fallbacks):
            return
        for result, n in (
            ("ok", tally.written),
            ("fallback", tally.fallbacks),
            ("overflow", tally.overflows),
        ):
            if n:
                self.summaries.labels(session, result).inc(n)
        self.summary_input.labels(session).inc(tally.input_tokens)
        self.summary_output.labels(session).inc(tally.output_tokens)

    def text(self) -> bytes:
        """The exposition text."""
        return generate_latest(self.registry)
