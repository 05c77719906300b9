"""The seeded long-session generator: determinism, exact size, real shape, window pressure."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.tokens import get_counter
from regio.traces import (
    CODING_PROFILE,
    ToolResults,
    dumps_trace,
    loads_trace,
    profile_from_traces,
    synthesize,
)
from regio.traces.cli import trace_filename
from regio.traces.synthprofile import coding_profile


def test_the_same_seed_gives_the_same_bytes() -> None:
    assert dumps_trace(synthesize(300, 7)) == dumps_trace(synthesize(300, 7))


def test_the_same_seed_gives_the_same_bytes_in_another_process_with_another_hash_seed() -> None:
    code = "import sys; from regio.traces import synthesize, dumps_trace; "
    code += "sys.stdout.write(dumps_trace(synthesize(120, 3)))"
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert out == dumps_trace(synthesize(120, 3))


def test_different_seeds_give_different_sessions() -> None:
    assert dumps_trace(synthesize(50, 1)) != dumps_trace(synthesize(50, 2))


@settings(max_examples=25, deadline=None)
@given(calls=st.integers(1, 160), seed=st.integers(0, 2**32))
def test_a_session_has_exactly_the_asked_calls_and_is_well_formed(calls: int, seed: int) -> None:
    trace = synthesize(calls, seed)
    assert len(trace.steps()) == calls
    assert trace.problems() == []
    assert trace.is_append_only()
    assert loads_trace(dumps_trace(trace)) == trace


def test_the_shipped_profile_is_what_the_bundled_coding_runs_measure() -> None:
    assert coding_profile() == CODING_PROFILE


def test_the_profile_is_measured_from_real_samples() -> None:
    assert len(CODING_PROFILE.sources) == 7
    assert len(CODING_PROFILE.output_chars) >= 50
    assert sum(CODING_PROFILE.episode_calls) == len(CODING_PROFILE.thought_chars)
    assert 0 < CODING_PROFILE.footer_share < 1


def test_profile_from_traces_refuses_traces_without_model_calls() -> None:
    with pytest.raises(ValueError, match="no trace"):
        profile_from_traces([])


def test_tool_output_sizes_follow_the_profile_median() -> None:
    trace = synthesize(1500, 11)
    sizes = sorted(
        len(r.content.split("\n(Open file:")[0])
        for e in trace.events
        if isinstance(e, ToolResults)
        for r in e.results
        if isinstance(r.content, str)
    )
    real = sorted(CODING_PROFILE.output_chars)
    median, real_median = sizes[len(sizes) // 2], real[len(real) // 2]
    assert 0.7 * real_median <= median <= 1.3 * real_median


def test_synthetic_text_has_the_token_density_of_the_real_outputs() -> None:
    counter = get_counter("o200k_base")
    text = "".join(
        r.content
        for e in synthesize(200, 5).events
        if isinstance(e, ToolResults)
        for r in e.results
        if isinstance(r.content, str)
    )
    # Measured on the bundled coding runs' outputs: 3.51 characters per o200k token.
    assert 3.0 <= len(text) / counter.count(text) <= 4.1


def test_a_thousand_call_session_outgrows_a_64k_window() -> None:
    counter = get_counter("o200k_base")
    trace = synthesize(1000, 7)
    total = counter.count(trace.system_prompt) + sum(
        counter.count_message(m) for m in trace.messages()
    )
    assert total > 4 * 64_000


def test_footers_carry_changing_open_file_state_for_region_capture() -> None:
    outputs = [
        r.content
        for e in synthesize(400, 2).events
        if isinstance(e, ToolResults)
        for r in e.results
        if isinstance(r.content, str)
    ]
    footers = [o.split("(Open file: ")[1].split(")")[0] for o in outputs if "(Open file: " in o]
    share = len(footers) / len(outputs)
    assert abs(share - CODING_PROFILE.footer_share) < 0.1
    assert 1 < len(set(footers)) < len(footers)


def test_synthesize_refuses_a_non_positive_call_count() -> None:
    with pytest.raises(ValueError, match="calls"):
        synthesize(0, 1)


def test_synth_cli_writes_the_generated_trace(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from regio.cli import main

    assert main(["traces", "synth", "--calls", "40", "--seed", "9", "--out", str(tmp_path)]) == 0
    trace = synthesize(40, 9)
    assert (tmp_path / trace_filename(trace)).read_text() == dumps_trace(trace)
    assert "calls=40" in capsys.readouterr().out


def test_synth_cli_refuses_zero_calls_with_exit_2(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from regio.cli import main

    assert main(["traces", "synth", "--calls", "0", "--out", str(tmp_path)]) == 2
    assert "--calls" in capsys.readouterr().err


def test_synth_cli_can_take_its_profile_from_given_traces(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from regio.cli import main
    from regio.traces import bundled_traces_dir, import_file

    source = bundled_traces_dir() / "tau-bench" / "gpt-4o-airline.first40.json"
    out = tmp_path / "like.jsonl"
    assert main(["traces", "synth", "--calls", "30", "--like", str(source), "--out", str(out)]) == 0
    profile = profile_from_traces(import_file(source).traces)
    assert out.read_text() == dumps_trace(synthesize(30, 0, profile=profile))
    assert profile.tool_names["get_user_details"] > 0


def test_synth_cli_refuses_a_like_source_that_does_not_import(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from regio.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["traces", "synth", "--like", str(bad), "--out", str(tmp_path)]) == 2
    assert f"error: {bad}: " in capsys.readouterr().err
