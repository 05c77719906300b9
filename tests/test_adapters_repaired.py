"""The adapters' requests (src/regio/adapters/repaired.py): any history, broken or not, laid out
through ``repaired_request`` gives a request both providers accept, with nothing left for the
render-time repair to change in the history; a valid history is laid out once and untouched.

CI runs a bounded number of examples; ``REGIO_FUZZ_EXAMPLES=N`` runs N."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

import regio
from regio.adapters.repaired import needs_repair, repaired_request
from regio.content import Message, Text, ToolResult, ToolUse
from regio.engine import HistoryRepaired, repair_history
from regio.layout import check_anthropic, check_openai_chat

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "30"))
BLUEPRINT = "examples/blueprints/coding-agent.yaml"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Few ids, so calls reuse them and results answer calls that are not there.
IDS = st.sampled_from(["c1", "c2", "c3", "c4"])
STEPS = st.one_of(
    st.builds(lambda t: Message("user", (Text(f"user says {t}"),)), st.integers(0, 9)),
    st.builds(lambda t: Message("assistant", (Text(f"assistant says {t}"),)), st.integers(0, 9)),
    st.builds(
        lambda ids: Message("assistant", tuple(ToolUse(i, "read_file", {"path": i}) for i in ids)),
        st.lists(IDS, min_size=1, max_size=2, unique=True),
    ),
    st.builds(lambda i: Message.tool((ToolResult(i, f"output for {i}"),)), IDS),
)


#: A call id reused after its result came back: admission renames the second call (and its
#: result) as they arrive, so the render-time repair has nothing left to change.
REUSED_ID = [
    Message("assistant", tuple(ToolUse(i, "read_file", {"path": i}) for i in ["c3", "c4"])),
    Message.tool((ToolResult("c3", "output for c3"),)),
    Message.tool((ToolResult("c4", "output for c4"),)),
    Message("assistant", (ToolUse("c3", "read_file", {"path": "c3"}),)),
    Message.tool((ToolResult("c3", "output for c3"),)),
]


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(STEPS, min_size=1, max_size=14), st.sampled_from(["anthropic", "openai"]))
@example(REUSED_ID, "anthropic")
def test_any_history_laid_out_through_the_adapters_gives_a_valid_request(
    steps: list[Message], provider: str
) -> None:
    eng = regio.Engine.from_blueprint(os.path.join(ROOT, BLUEPRINT))
    repairs: list[Any] = []
    requests: list[Any] = []
    eng.subscribe(lambda e: repairs.append(e) if isinstance(e, HistoryRepaired) else None)
    for message in [Message("user", (Text("the task"),)), *steps]:
        eng.add_message(message)
    repairs.clear()  # admission's own repairs (a reused call id renamed) are in `admitted`
    admitted = [r.entry.message for r in eng.transcript() if r.kind == "message" and r.entry]
    original = eng.request
    eng.request = lambda *a, **k: requests.append(a) or original(*a, **k)  # type: ignore[method-assign]
    _, payload = repaired_request(eng, provider)
    check = check_anthropic if provider == "anthropic" else check_openai_chat
    assert check(payload) == []
    assert not needs_repair(eng)
    if not repair_history(admitted).changed:
        assert repairs == [] and len(requests) == 1
    else:
        assert repairs and len(requests) == 2
    kept = [r.entry.message for r in eng.transcript() if r.kind == "message" and r.entry]
    assert kept == admitted  # the transcript keeps what was received
