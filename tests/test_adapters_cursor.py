"""The adapters' cursor (regio.adapters.cursor): however a framework's history is handed to
adapters over time (growing, with the engine saved and loaded between calls, by new adapter
objects), every message reaches the engine exactly once; a run that does not carry the earlier
turns is new from its first message.

CI runs a bounded number of examples; ``REGIO_FUZZ_EXAMPLES=N`` runs N."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import regio
from adapter_harness_support import engine
from regio.adapters.cursor import canonical_digest, first_new, mark

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "12"))


def _admit(eng: regio.Engine, admitted: list[str], history: list[str]) -> None:
    """What an adapter does on one model call: admit what is new, move the cursor."""
    start = first_new(eng, "test", history, canonical_digest)
    admitted.extend(history[start:])
    if history:
        mark(eng, "test", len(history), canonical_digest(history[-1]))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    steps=st.lists(
        st.tuples(st.integers(min_value=1, max_value=4), st.booleans()), min_size=1, max_size=12
    )
)
def test_every_message_of_a_growing_history_is_admitted_once(
    steps: list[tuple[int, bool]], tmp_path_factory: Any
) -> None:
    eng, admitted, history = engine(), [], []
    path: Path = tmp_path_factory.mktemp("cursor") / "state.json"
    for grow, reload in steps:
        history.extend(f"message {len(history)} of the session" for _ in range(grow))
        _admit(eng, admitted, history)
        if reload:  # a new adapter over the engine saved and loaded again
            eng = regio.Engine.load(eng.save(path))
    assert admitted == history


def test_a_run_without_the_earlier_turns_is_new_from_its_first_message() -> None:
    eng, admitted = engine(), []
    _admit(eng, admitted, ["question one", "answer one"])
    _admit(eng, admitted, ["question two"])
    assert admitted == ["question one", "answer one", "question two"]


def test_a_history_rewritten_before_the_cursor_admits_only_what_follows_it() -> None:
    eng, admitted = engine(), []
    _admit(eng, admitted, ["q1", "a1", "q2", "a2"])
    _admit(eng, admitted, ["summary of q1 and a1", "q2", "a2", "q3"])
    assert admitted == ["q1", "a1", "q2", "a2", "q3"]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    steps=st.lists(
        st.tuples(st.integers(min_value=1, max_value=4), st.booleans(), st.booleans()),
        min_size=1,
        max_size=12,
    )
)
def test_a_history_that_leaves_out_the_message_the_cursor_stopped_at_admits_each_once(
    steps: list[tuple[int, bool, bool]], tmp_path_factory: Any
) -> None:
    """Adapters mark the cursor after each message; a history that leaves out the last one
    admitted (ADK leaves out a call that never got its response; a run resumed from the
    history saved before a stopped run) goes on from the second anchor: every message reaches
    the engine once."""
    eng, admitted, history = engine(), [], []
    path: Path = tmp_path_factory.mktemp("anchor") / "state.json"
    made = 0
    for grow, drop, reload in steps:
        if drop and history:
            history = history[:-1]  # the message the cursor stopped at is left out
        for _ in range(grow):
            history.append(f"message {made} of the session")
            made += 1
        start = first_new(eng, "test", history, canonical_digest)
        for index in range(start, len(history)):
            admitted.append(history[index])
            mark(eng, "test", index + 1, canonical_digest(history[index]))
        if reload:
            eng = regio.Engine.load(eng.save(path))
    assert admitted == [f"message {n} of the session" for n in range(made)]
