"""When a request's compactions run: beside the upstream call, while the model generates, when
the window fits without them (the request goes up one turn over the conversation's budget, the
next one compacted), before it is sent when it does not, or always before with
``--compact-before-send``; every upstream request fits the window either way."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy_support import ScriptedUpstream, Step, blueprint, in_process

WINDOW, OUTPUT = 8000, 500
BLUEPRINT = blueprint(
    "proxy-timing", "anthropic:claude-x", window=WINDOW, output=OUTPUT, conversation=6000,
    history=1000,
)  # fmt: skip


def _run(sizes: list[int], **config: Any) -> tuple[ScriptedUpstream, list[dict[str, Any]]]:
    """A session whose user messages have ``sizes`` words; the upstream and the request log."""
    upstream = ScriptedUpstream([Step("noted")] * (len(sizes) + 1), WINDOW, OUTPUT)
    where = tempfile.mkdtemp()
    log = f"{where}/requests.jsonl"
    with in_process(
        upstream, BLUEPRINT, f"sqlite:{where}/p.db", request_log=log, **config
    ) as client:
        history: list[dict[str, Any]] = []
        for i, n in enumerate(sizes):
            history.append({"role": "user", "content": f"note {i}: " + "word " * n})
            body = {"model": "claude-x", "max_tokens": 50, "messages": history}
            response = client.post("/v1/messages", json=body, headers={"x-api-key": "k"})
            assert response.status_code == 200, response.text
            history.append({"role": "assistant", "content": response.json()["content"]})
    with open(log, encoding="utf-8") as f:
        return upstream, [json.loads(line) for line in f]


def test_a_compaction_the_request_queues_runs_after_its_answer_when_the_window_fits():
    upstream, rows = _run([250] * 30)
    compacted = [k for k, r in enumerate(rows) if r["compacted"]]
    assert compacted, "the session never compacted: the check is too easy"
    prompts = upstream.prompts
    for k in compacted:
        # sent uncompacted (it grew by the new turn), the next request compacted
        assert prompts[k] > prompts[k - 1]
        assert k + 1 == len(prompts) or prompts[k + 1] < prompts[k]
        assert rows[k]["beside_ms"] > 0  # it ran beside the upstream call
    assert max(prompts) <= WINDOW - OUTPUT


def test_with_compact_before_send_the_compacted_request_goes_up_compacted():
    upstream, rows = _run([250] * 30, compact_after_send=False)
    compacted = [k for k, r in enumerate(rows) if r["compacted"]]
    assert compacted
    for k in compacted:
        assert upstream.prompts[k] < upstream.prompts[k - 1]
    assert max(upstream.prompts) <= WINDOW - OUTPUT


def test_a_window_near_its_limit_compacts_before_the_request_is_sent():
    # turns of ~1,300 tokens: the conversation's budget (6,000) is passed with the window over
    # 95% of its limit (7,500), so waiting for the answer would not fit
    upstream, rows = _run([1300] * 10)
    compacted = [k for k, r in enumerate(rows) if r["compacted"]]
    assert compacted
    assert upstream.prompts[compacted[0]] < upstream.prompts[compacted[0] - 1]
    assert max(upstream.prompts) <= WINDOW - OUTPUT


@settings(
    max_examples=int(os.environ.get("REGIO_FUZZ_EXAMPLES", "4")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.integers(20, 1400), min_size=12, max_size=16))
def test_every_upstream_request_fits_the_window_whenever_compactions_run(sizes):
    upstream, rows = _run(sizes)
    assert len(rows) == len(sizes) and all(r["committed"] for r in rows)
    assert max(upstream.prompts) <= WINDOW - OUTPUT
