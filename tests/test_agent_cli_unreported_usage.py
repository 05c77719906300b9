"""``regio run`` shows a token count the provider did not report as unknown (``n/a``), never
as 0: a server that sends no ``usage``, or a usage without the cached count; a replayed trace
without recorded usage. A count reported as 0 is still 0."""

from __future__ import annotations

import contextlib
import io
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chat_server_support import chat_answer, write_blueprint
from regio.agent.cli import UNKNOWN
from regio.agent.providers import anthropic_usage, openai_usage
from regio.agent.providers.replay import recorded_unreported
from regio.agent.types import USAGE_COUNTS
from regio.cli import main
from regio.content import Text, ToolUse
from regio.traces.builder import TraceBuilder
from regio.traces.claudecode import anthropic_usage as claude_code_usage
from regio.traces.format import AssistantMessage, Header, Trace, Usage, UserMessage
from regio.traces.jsonl import write_trace
from regio.traces.openhands import litellm_usage


def _run(tmp_path: Path, url: str, capsys: Any) -> tuple[list[str], str]:
    pytest.importorskip("openai", reason="the openai SDK is not installed")
    bp = write_blueprint(tmp_path)
    argv = ["run", str(bp), "--base-url", url, "--model", "m", "--task", "Say hello"]
    assert main([*argv, "--predict", "none"]) == 0
    out = capsys.readouterr().out
    (row,) = [line for line in out.splitlines() if re.match(r"^\W*1\W", line)]
    cells = [c.strip() for c in re.split(r"[│|]", row) if c.strip()]
    (stop,) = [line for line in out.splitlines() if line.startswith("stop:")]
    return cells, stop


def test_a_server_without_usage_shows_prompt_and_cached_as_unknown(tmp_path, chat_server, capsys):
    cells, stop = _run(tmp_path, chat_server(chat_answer(None)), capsys)
    assert cells[1:3] == [UNKNOWN, UNKNOWN]
    assert f"prompt {UNKNOWN}" in stop and f"cached {UNKNOWN}" in stop
    assert "cached 0" not in stop


def test_a_usage_without_the_cached_count_shows_only_cached_as_unknown(
    tmp_path, chat_server, capsys
):
    usage = {"prompt_tokens": 321, "completion_tokens": 3}
    cells, stop = _run(tmp_path, chat_server(chat_answer(usage)), capsys)
    assert cells[1:3] == ["321", UNKNOWN]
    assert "prompt 321" in stop and f"cached {UNKNOWN}" in stop


def test_a_reported_zero_cached_count_is_shown_as_zero(tmp_path, chat_server, capsys):
    usage = {
        "prompt_tokens": 321,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 0},
    }
    cells, stop = _run(tmp_path, chat_server(chat_answer(usage)), capsys)
    assert cells[1:3] == ["321", "0"]
    assert "cached 0 (0.0%)" in stop


def test_a_replayed_trace_without_usage_shows_unknown(tmp_path, capsys):
    assert f"cached {UNKNOWN}" in _replay_stop(tmp_path, capsys, None)


OPTIONAL_INT = st.none() | st.integers(0, 10**6)


@given(prompt=OPTIONAL_INT, cached=OPTIONAL_INT, out=OPTIONAL_INT)
def test_openai_usage_names_exactly_the_counts_it_lacks(prompt, cached, out):
    usage: dict[str, Any] = {}
    if prompt is not None:
        usage["prompt_tokens"] = prompt
    if out is not None:
        usage["completion_tokens"] = out
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    got = openai_usage(usage)
    if not usage:
        assert got.unreported == USAGE_COUNTS
        return
    missing = {
        name
        for name, value in (("prompt_tokens", prompt), ("cached_tokens", cached),
                            ("output_tokens", out))
        if value is None
    }  # fmt: skip
    assert set(got.unreported) == missing
    assert got.cached_tokens == (cached or 0)


@given(plain=OPTIONAL_INT, read=OPTIONAL_INT, write=OPTIONAL_INT, out=OPTIONAL_INT)
def test_anthropic_usage_names_exactly_the_counts_it_lacks(plain, read, write, out):
    fields = {
        "input_tokens": ("prompt_tokens", plain),
        "cache_read_input_tokens": ("cached_tokens", read),
        "cache_creation_input_tokens": ("cache_write_tokens", write),
        "output_tokens": ("output_tokens", out),
    }
    usage = {key: value for key, (_, value) in fields.items() if value is not None}
    got = anthropic_usage(usage)
    if not usage:
        assert got.unreported == USAGE_COUNTS
        return
    assert set(got.unreported) == {name for name, value in fields.values() if value is None}


def test_a_llamacpp_cache_count_counts_as_reported() -> None:
    got = openai_usage({"prompt_tokens": 10, "completion_tokens": 1}, {"cache_n": 4})
    assert got.cached_tokens == 4 and "cached_tokens" not in got.unreported


def _replay_stop(tmp_path: Path, capsys: Any, usage: Usage | None) -> str:
    trace = Trace(
        Header(id="t", source_format="regio"),
        (
            UserMessage(0.0, (Text("Say hello"),)),
            AssistantMessage(1.0, (Text("Hello."),), usage=usage),
        ),
    )
    path = write_trace(trace, tmp_path / "t.jsonl")
    bp = write_blueprint(tmp_path)
    assert main(["run", str(bp), "--provider", "replay", "--trace", str(path)]) == 0
    out = capsys.readouterr().out
    (stop,) = [line for line in out.splitlines() if line.startswith("stop:")]
    return stop


def _replay_run(folder: Path, usages: list[Usage | None]) -> str:
    """The stop line of ``regio run`` replaying one step per usage of ``usages`` (``None``:
    that call recorded none); every step but the last calls a tool, so the loop goes on."""
    events: list[Any] = [UserMessage(0.0, (Text("Say hello"),))]
    for k, usage in enumerate(usages):
        last = k == len(usages) - 1
        block = Text("Hello.") if last else ToolUse(f"c{k}", "lookup", {"q": k})
        events.append(AssistantMessage(1.0 + k, (block,), usage=usage))
    path = write_trace(Trace(Header(id="t", source_format="regio"), tuple(events)), folder / "t")
    bp = write_blueprint(folder)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["run", str(bp), "--provider", "replay", "--trace", str(path)]) == 0
    (stop,) = [line for line in out.getvalue().splitlines() if line.startswith("stop:")]
    return stop


def test_counts_only_some_steps_reported_are_summed_over_k_of_n_steps(tmp_path):
    stop = _replay_run(tmp_path, [Usage.openai(120, 5, cached_tokens=48), None])
    assert "steps 2" in stop
    assert "prompt 120 over 1 of 2 steps" in stop
    assert "cached 48 over 1 of 2 steps (40.0%)" in stop


def test_a_count_every_step_reported_is_not_qualified(tmp_path):
    usages = [Usage.openai(120, 5, cached_tokens=48), Usage.openai(200, 5, cached_tokens=None)]
    stop = _replay_run(tmp_path, usages)
    assert "prompt 320 · " in stop  # both steps reported it: no "over"
    # the cached share is taken over the step that reported both counts
    assert "cached 48 over 1 of 2 steps (40.0%)" in stop


_STEP_USAGE = st.none() | st.builds(
    Usage.openai, st.integers(0, 5_000), st.integers(0, 50), st.none() | st.integers(0, 5_000)
)


@settings(max_examples=15, deadline=None)
@given(st.lists(_STEP_USAGE, min_size=1, max_size=4))
def test_the_stop_line_sums_each_count_over_the_steps_that_reported_it(usages):
    with tempfile.TemporaryDirectory() as folder:
        stop = _replay_run(Path(folder), usages)
    n = len(usages)
    reported = {
        "prompt": [u.prompt_tokens for u in usages if u is not None],
        "cached": [
            u.cached_tokens for u in usages if u is not None and "cached_tokens" in u.reported
        ],
    }
    for label, counts in reported.items():
        (part,) = [p for p in stop.split(" · ") if p.startswith(f"{label} ")]
        if not counts:
            assert part == f"{label} {UNKNOWN}"
            continue
        expected = f"{label} {sum(counts)}"
        if len(counts) < n:
            expected += f" over {len(counts)} of {n} steps"
        assert part.split(" (")[0] == expected
    both = [u for u in usages if u is not None and "cached_tokens" in u.reported]
    prompt = sum(u.prompt_tokens for u in both)
    if prompt:
        share = sum(u.cached_tokens for u in both) / prompt * 100
        assert stop.endswith(f"({share:.1f}%)")
    else:
        assert not stop.endswith("%)")


def test_a_recorded_litellm_usage_without_a_cached_count_replays_it_as_unknown(tmp_path, capsys):
    builder = TraceBuilder("t.json")
    usage = litellm_usage({"prompt_tokens": 120, "completion_tokens": 9}, builder, 0)
    assert usage is not None and "cached_tokens" not in usage.reported
    assert f"cached {UNKNOWN}" in _replay_stop(tmp_path, capsys, usage)


def test_a_recorded_zero_cached_count_replays_as_zero(tmp_path, capsys):
    builder = TraceBuilder("t.json")
    raw = {"prompt_tokens": 120, "completion_tokens": 9, "prompt_tokens_details": {}}
    raw["prompt_tokens_details"]["cached_tokens"] = 0
    usage = litellm_usage(raw, builder, 0)
    assert usage is not None
    assert "cached 0 (0.0%)" in _replay_stop(tmp_path, capsys, usage)


@given(cached=OPTIONAL_INT)
def test_a_recorded_openai_usage_names_the_cached_count_only_when_absent(cached):
    usage = Usage.openai(100, 5, cached_tokens=cached)
    assert recorded_unreported(usage) == (() if cached is not None else ("cached_tokens",))
    assert usage.cached_tokens == (cached or 0)


@pytest.mark.parametrize(
    ("raw", "unreported"),
    [
        ({"input_tokens": 10, "output_tokens": 2}, ("cached_tokens", "cache_write_tokens")),
        (
            {"input_tokens": 10, "output_tokens": 2, "cache_read_input_tokens": 0},
            ("cache_write_tokens",),
        ),
        (
            {
                "input_tokens": 10,
                "output_tokens": 2,
                "cache_read_input_tokens": 4,
                "cache_creation_input_tokens": 0,
            },
            (),
        ),
    ],
)
def test_an_imported_claude_code_usage_names_the_cache_counts_it_lacks(
    raw: dict[str, int], unreported: tuple[str, ...]
) -> None:
    usage = claude_code_usage(raw, TraceBuilder("t.jsonl"), 0, "message.usage")
    assert usage is not None
    assert recorded_unreported(usage) == unreported
    assert usage.prompt_tokens == 10 + raw.get("cache_read_input_tokens", 0)
