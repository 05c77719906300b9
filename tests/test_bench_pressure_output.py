"""The ``recorded`` row of a pressure run: the requests as the agents sent them, the window
not applied, and the output saying so."""

from __future__ import annotations

import pytest
from rich.console import Console

from _bench_fixtures import swe_trace, tiny_blueprint
from regio.bench.output import AS_SENT, broken_lines, print_report, recorded_window_line
from regio.bench.run import run_bench
from regio.cli import main

WINDOW = 10_000


def _printed(report: object) -> str:
    console = Console(record=True, width=400)
    print_report(report, console)  # type: ignore[arg-type]
    return console.export_text()


def test_under_a_window_the_recorded_row_is_labelled_as_sent_with_the_window_not_applied() -> None:
    report = run_bench(
        [(swe_trace(steps=60), tiny_blueprint())],
        layouts=("recorded", "regio"),
        window_tokens=WINDOW,
    )
    text = _printed(report)
    assert AS_SENT in text and "window not applied" in text
    sizes = report.traces[0].models[0].layout("recorded").prompt_per_request
    limit = report.traces[0].prompt_limit
    assert limit is not None and limit < WINDOW
    over = sum(n > limit for n in sizes)
    assert over > 0  # the recorded requests really outgrow the window: they are as sent
    line = recorded_window_line(report.traces, WINDOW)
    assert line is not None
    assert f"{over} of {len(sizes)} exceed the {WINDOW:,}-token window less the output" in line
    assert f"a prompt over {limit:,} tokens, context_window - max_output_tokens" in line
    assert f"the largest is {max(sizes):,} tokens" in line
    assert line.split(";")[0] in " ".join(text.split())


def test_the_recorded_line_and_the_broken_line_count_the_same_requests_over_the_window() -> None:
    # `regio demo` printed "27 of 571 exceed the 6,144-token window" over the window and
    # "broken: recorded ... 30 of 571 calls (30 over the window)" over the window less the
    # output reserve, two lines apart
    report = run_bench(
        [(swe_trace(steps=60), tiny_blueprint()), (swe_trace(steps=45), tiny_blueprint())],
        layouts=("recorded", "regio"),
        window_tokens=WINDOW,
    )
    recorded = report.totals[0].layout("recorded")
    sizes = recorded.prompt_per_request
    assert sum(n > WINDOW for n in sizes) < recorded.over_window_requests  # the two differ
    line = recorded_window_line(report.traces, WINDOW)
    assert line is not None
    n = recorded.requests + recorded.unsent_requests
    assert f"{recorded.over_window_requests} of {n} exceed the" in line
    broken = [b for b in broken_lines(report.totals[0]) if b.startswith("broken: recorded")]
    assert broken == [
        f"broken: recorded ({report.totals[0].cache_model}) {recorded.broken_requests} of {n} "
        f"calls ({recorded.over_window_requests} over the window)"
    ]


def test_under_a_window_the_recorded_row_shows_no_share_of_the_window_capped_bound() -> None:
    report = run_bench(
        [(swe_trace(steps=60), tiny_blueprint())],
        layouts=("recorded", "regio"),
        window_tokens=WINDOW,
    )
    rows = [r for r in _printed(report).splitlines() if AS_SENT in r and "│" in r]
    assert rows and all("—" in r for r in rows)


def test_without_a_window_the_recorded_row_is_plain_and_has_no_window_line() -> None:
    report = run_bench([(swe_trace(steps=8), tiny_blueprint())], layouts=("recorded", "regio"))
    text = _printed(report)
    assert AS_SENT not in text and "window not applied" not in text
    assert any(r.split("│")[1].strip() == "recorded" for r in text.splitlines() if "│" in r)


def test_the_window_option_help_says_the_recorded_row_stays_as_sent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "the recorded row stays as sent: the window is not applied to it" in text
