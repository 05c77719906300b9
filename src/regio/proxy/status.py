"""The status page (``GET /``) and its data (``GET /status.json``).

The page lists the most recently active sessions of the store (every worker's, read from the
shared records), each with its requests, cost (the client's requests and, with
``--summarizer upstream``, the summary requests its compactions sent upstream, at the summary
model's prices: :func:`regio.proxy.accounting.summary_cost`; a cost some of whose requests
have no price is shown as unpriced, ``None``, never as the sum of the priced ones), the cost of
the same requests had the client's history been sent as it is (:mod:`regio.proxy.accounting`)
and the saving against it, the cache hit rate the upstream reported and the one the simulator
predicted, compactions, repairs, answered restores, the regions that caused first cache
misses, and a chart of its last requests (tokens the client sent, tokens sent upstream, tokens
read from cache). The page is one static HTML file with a script that reads ``/status.json``
and draws the charts as SVG (no third-party script, nothing loaded from another host).
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from regio.cache.billing import total

from .records import Records, RequestStat, SessionMeta, Totals

__all__ = ["page_html", "status_data"]

#: Sessions listed, and requests charted per session.
SESSIONS, POINTS = 50, 200


def _point(s: RequestStat) -> dict[str, Any]:
    return {
        "i": s.index,
        "t": s.t,
        "client": s.client_tokens,
        "upstream": s.upstream_tokens,
        "prompt": s.prompt_tokens,
        "read": s.cache_read,
        "predicted": s.predicted_read,
        "compacted": s.compacted,
        "cost": s.total_cost_usd,
        "summary_calls": s.summary_calls,
        "summary_cost": s.summary_cost_usd if s.summary_calls else 0.0,
        "as_is": s.as_is_cost_usd,
    }


def _session(meta: SessionMeta, stats: list[RequestStat]) -> dict[str, Any]:
    t = meta.totals
    cost, as_is = t.total_cost_usd, t.as_is_usd
    saving = None if cost is None or as_is is None else as_is - cost
    return {
        "id": meta.id,
        "found_by": "x-regio-session" if meta.key.startswith("name:") else "fingerprint",
        "api": meta.api,
        "parent": meta.parent,
        "forked_at": meta.forked_at,
        "history_items": meta.count,
        "requests": t.requests,
        "client_tokens": t.client_tokens,
        "upstream_tokens": t.upstream_tokens,
        "saved_tokens": t.client_tokens - t.upstream_tokens,
        "cost_usd": cost,
        "requests_cost_usd": None if t.unpriced else t.cost_usd,
        "unpriced_requests": t.unpriced,
        "summary_calls": t.summary_calls,
        "summary_input_tokens": t.summary_input_tokens,
        "summary_output_tokens": t.summary_output_tokens,
        "summary_cost_usd": None if t.summary_unpriced else t.summary_cost_usd,
        "summary_unpriced_calls": t.summary_unpriced,
        "as_is_cost_usd": as_is,
        "saving_usd": saving,
        "saving_share": saving / as_is if saving is not None and as_is else None,
        "hit_rate": t.cache_read / t.prompt_tokens if t.prompt_tokens else None,
        "predicted_hit_rate": _predicted_rate(t),
        "compactions": t.compactions,
        "repairs": t.repairs,
        "restores": t.restores,
        "first_miss": dict(sorted(t.first_miss.items(), key=lambda kv: -kv[1])),
        "updated": meta.updated,
        "chart": [_point(s) for s in stats],
    }


def _predicted_rate(t: Totals) -> float | None:
    """The cache simulator's predicted reads over the tokens sent upstream: ``0.0`` when it
    predicted requests and none read, ``None`` only when it predicted none (a session recorded
    before :attr:`Totals.predicted` was kept counts as predicted when it read any)."""
    if not t.upstream_tokens or not (t.predicted or t.predicted_read):
        return None
    return t.predicted_read / t.upstream_tokens


def status_data(
    records: Records, *, sessions: int = SESSIONS, points: int = POINTS
) -> dict[str, Any]:
    """The data of the status page (module doc), per session and in ``totals`` (USD; tokens):
    ``cost_usd`` = ``requests_cost_usd`` (the client's requests) + ``summary_cost_usd`` (the
    summary requests'); each is ``None`` (unpriced) when some request it sums has no price
    (``unpriced_requests`` client requests, ``summary_unpriced_calls`` summary requests), and
    ``cost_usd`` then too: a cost is never the sum of its priced parts alone
    (:func:`regio.cache.billing.bill`). ``saving_usd`` / ``saving_share`` against
    ``as_is_cost_usd``, from ``cost_usd`` (``None`` when either is unpriced). A chart point's
    ``cost`` includes its request's summary cost, ``summary_cost`` alone (``None``:
    unpriced)."""
    metas = records.sessions(sessions)
    rows = [_session(m, records.stats(m.id, points)) for m in metas]
    total_cost = total(r["cost_usd"] for r in rows)
    total_as_is = total(r["as_is_cost_usd"] for r in rows)
    unpriced = sum(m.totals.summary_unpriced for m in metas)
    summary_cost = sum(m.totals.summary_cost_usd for m in metas)
    prompt = sum(m.totals.prompt_tokens for m in metas)
    read = sum(m.totals.cache_read for m in metas)
    return {
        "totals": {
            "sessions": len(rows),
            "requests": sum(r["requests"] for r in rows),
            "cost_usd": total_cost,
            "as_is_cost_usd": total_as_is,
            "saving_usd": (
                None if total_cost is None or total_as_is is None else total_as_is - total_cost
            ),
            "unpriced_requests": sum(m.totals.unpriced for m in metas),
            "summary_calls": sum(r["summary_calls"] for r in rows),
            "summary_cost_usd": None if unpriced else summary_cost,
            "summary_unpriced_calls": unpriced,
            "hit_rate": read / prompt if prompt else None,
            "client_tokens": sum(r["client_tokens"] for r in rows),
            "upstream_tokens": sum(r["upstream_tokens"] for r in rows),
        },
        "sessions": rows,
    }


def page_html() -> str:
    """The status page's HTML (it fetches ``/status.json`` itself)."""
    return resources.files("regio.proxy").joinpath("status.html").read_text(encoding="utf-8")
