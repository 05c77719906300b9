"""The status page's predicted hit rate: 0.0% when the cache simulator predicted requests and
none read from the cache, "–" (``None``) only when it predicted none (user report: a zero
prediction showed as "–" while the session's chart had predicted 0)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")

from regio.proxy.records import RequestStat, SessionMeta
from regio.proxy.status import status_data
from regio.proxy.turn import _totalled


class _Records:
    """The two reads ``status_data`` makes, over one session."""

    def __init__(self, meta: SessionMeta, stats: list[RequestStat]) -> None:
        self._meta, self._stats = meta, stats

    def sessions(self, limit: int) -> list[SessionMeta]:
        return [self._meta]

    def stats(self, session: str, limit: int) -> list[RequestStat]:
        return self._stats


def _row(predicted: list[int | None]) -> dict[str, object]:
    meta = SessionMeta(id="s1", key="fp:x", api="openai", created=0.0, updated=0.0)
    stats = [
        RequestStat(index=i, t=float(i), client_tokens=900, upstream_tokens=1000, predicted_read=p)
        for i, p in enumerate(predicted)
    ]
    for stat in stats:
        meta = _totalled(meta, stat)
    (row,) = status_data(_Records(meta, stats))["sessions"]  # type: ignore[arg-type]
    return row


def test_a_session_predicted_to_read_nothing_shows_a_zero_predicted_hit_rate() -> None:
    row = _row([0, 0, 0])
    assert row["predicted_hit_rate"] == 0.0
    assert [p["predicted"] for p in row["chart"]] == [0, 0, 0]  # type: ignore[index]


def test_a_session_nothing_was_predicted_for_shows_no_predicted_hit_rate() -> None:
    assert _row([None, None])["predicted_hit_rate"] is None


def test_a_predicted_hit_rate_is_the_predicted_reads_over_the_tokens_sent_upstream() -> None:
    assert _row([0, 500, None, 700])["predicted_hit_rate"] == pytest.approx(1200 / 4000)
