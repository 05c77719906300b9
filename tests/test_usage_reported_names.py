"""The provider's own names of the usage counts are declared once, on ``Usage``
(``Usage.reported_names``): the constructors write ``reported`` with them and the replay reads
which counts a recorded usage left out from them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from regio.agent.providers.replay import recorded_unreported
from regio.agent.types import USAGE_COUNTS
from regio.traces.format import Usage
from regio.traces.jsonl import loads_trace

COUNT = st.integers(0, 10**6)
MAYBE = st.none() | COUNT


def test_each_provider_names_the_counts_it_reports_in_its_own_terms() -> None:
    assert Usage.reported_names("anthropic") == {
        "prompt_tokens": "input_tokens",
        "cached_tokens": "cache_read_input_tokens",
        "cache_write_tokens": "cache_creation_input_tokens",
        "output_tokens": "output_tokens",
    }
    # OpenAI reports no cache writes
    assert Usage.reported_names("openai") == {
        "prompt_tokens": "input_tokens",
        "cached_tokens": "cached_tokens",
        "output_tokens": "output_tokens",
    }
    assert Usage.reported_names(None) == Usage.reported_names("gemini") == {}
    assert set(Usage.reported_names("anthropic")) <= set(USAGE_COUNTS)


def test_the_names_returned_are_a_copy() -> None:
    Usage.reported_names("openai").clear()
    assert Usage.reported_names("openai")


@given(COUNT, COUNT, MAYBE, MAYBE)
def test_an_anthropic_usage_reports_exactly_the_named_counts_given(
    plain: int, out: int, read: int | None, write: int | None
) -> None:
    usage = Usage.anthropic(plain, out, read, write)
    names = Usage.reported_names("anthropic")
    given_counts = {
        "prompt_tokens": plain,
        "cached_tokens": read,
        "cache_write_tokens": write,
        "output_tokens": out,
    }
    assert usage.reported == {names[k]: v for k, v in given_counts.items() if v is not None}
    assert recorded_unreported(usage) == tuple(k for k, v in given_counts.items() if v is None)


@given(COUNT, COUNT, MAYBE)
def test_an_openai_usage_reports_exactly_the_named_counts_given(
    prompt: int, out: int, cached: int | None
) -> None:
    usage = Usage.openai(prompt, out, cached)
    names = Usage.reported_names("openai")
    expected = {names["prompt_tokens"]: prompt, names["output_tokens"]: out}
    if cached is not None:
        expected[names["cached_tokens"]] = cached
    assert usage.reported == expected
    assert list(usage.reported) == list(expected)  # the order traces are written in
    assert recorded_unreported(usage) == (() if cached is not None else ("cached_tokens",))


@given(st.sampled_from(["anthropic", "openai"]), st.data())
def test_a_recorded_usage_missing_a_named_count_replays_it_as_unreported(
    provider: str, data: st.DataObject
) -> None:
    names = Usage.reported_names(provider)
    kept = data.draw(st.sets(st.sampled_from(sorted(names))))
    reported = {names[k]: 1 for k in sorted(kept)}
    usage = Usage(provider=provider, reported=reported)  # type: ignore[arg-type]
    if not reported:  # nothing named: read as it was, fully reported
        assert recorded_unreported(usage) == ()
    else:
        assert set(recorded_unreported(usage)) == set(names) - kept


def test_a_trace_written_before_keeps_its_reported_names() -> None:
    line = (
        '{"type": "assistant", "t": 1.0, "blocks": [], "usage": {"prompt_tokens": 9, '
        '"provider": "openai", "reported": {"input_tokens": 9, "output_tokens": 2}}}'
    )
    header = '{"type": "header", "id": "t", "source_format": "regio", "version": 2}'
    (event,) = loads_trace(header + "\n" + line + "\n").events
    assert recorded_unreported(event.usage) == ("cached_tokens",)
