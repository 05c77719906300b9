"""An engine state machine: random user turns, tool calls (answered now, later or not yet),
context-tool calls (good and bad), refused writes, requests and save/load, with the
invariants checked after every step:

* no request over the ceiling;
* every tool_result is preceded by its tool_use and every tool_use is answered exactly once
  unless its call is still pending (its group open: no result yet, or only progress reports,
  ``final=False``); the latest result of a call is the one rendered (a latest progress report
  as one text block of its own, the call's tool_result being the fixed running marker), and a
  pending call's group is never compacted or evicted away;
* no pinned, keyed or checklist entry silently lost, and a compact_history region that holds a
  summary never ends up empty;
* a reject region is untouched by a refused write;
* same state, same bytes; at most 4 cache markers;
* save then load renders the same bytes.

CI runs a bounded number of examples; ``REGIO_FUZZ_EXAMPLES=N`` runs N.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from progress_support import call_is_open
from regio.content import ToolUse
from regio.engine import Engine
from regio.layout.repair import RUNNING_RESULT

BLUEPRINT = """
version: 1
name: machine
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 200000}
tokenizer: heuristic
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 400, seed: "You are careful."}
  - {name: facts, kind: keyed, budget: 300, admission: reject}
  - {name: todo, kind: checklist, budget: 600}
  - {name: history, kind: compact_history, source: conversation, budget: 1500}
  - name: conversation
    kind: sliding_window
    budget: 3000
    eviction: {strategy: compact, compact_count: 6}
"""

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "12"))


def _blocks(payload: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for m in payload["messages"]:
        content = m["content"]
        if isinstance(content, str):
            continue
        out.extend((m["role"], b) for b in content)
    return out


class EngineMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.engine = Engine.from_blueprint(BLUEPRINT)
        self.pending: list[str] = []
        self.latest: dict[str, str] = {}
        self.reported: set[str] = set()  # calls whose latest result is a progress report
        self.steps = 0
        self.calls = 0
        self.keys: dict[str, str] = {}
        self.items: set[str] = set()
        self.had_summary = False
        self.dir = Path(tempfile.mkdtemp())

    # ----- rules -----------------------------------------------------------------------
    @rule(words=st.integers(1, 400))
    @precondition(lambda self: not self.pending)
    def user_turn(self, words: int) -> None:
        self.engine.add_user("please " + "look " * words)

    @rule(k=st.integers(1, 3), answer_now=st.booleans(), size=st.integers(1, 600))
    @precondition(lambda self: not self.pending)
    def tool_calls(self, k: int, answer_now: bool, size: int) -> None:
        ids = [f"c{self.calls + i}" for i in range(k)]
        self.calls += k
        self.engine.add_assistant(
            "calling", tool_calls=[ToolUse(i, "shell", {"n": i}) for i in ids]
        )
        self.pending.extend(ids)
        if answer_now:
            self.answer(0, size)

    @rule(which=st.integers(0, 5), size=st.integers(1, 600))
    @precondition(lambda self: bool(self.pending))
    def answer(self, which: int, size: int) -> None:
        call = self.pending.pop(which % len(self.pending))
        text = f"done {call} " + "out " * size
        self.engine.add_tool_result(call, text)
        self.latest[call] = text
        self.reported.discard(call)

    @rule(which=st.integers(0, 5), size=st.integers(1, 200))
    @precondition(lambda self: bool(self.pending))
    def progress(self, which: int, size: int) -> None:
        call = self.pending[which % len(self.pending)]
        self.steps += 1
        text = f"status: running {call} step {self.steps} " + "x " * size
        self.engine.add_tool_result(call, text, final=False)
        self.latest[call] = text
        self.reported.add(call)

    @rule(key=st.sampled_from("abcde"), words=st.integers(1, 120))
    def write_fact(self, key: str, words: int) -> None:
        region = self.engine.window.region("facts")
        before = list(region.entries)
        text = f"fact {key} " + "x " * words
        outcome = self.engine.handle_tool_call(
            "context_write", {"region": "facts", "key": key, "text": text}
        )
        if outcome.ok:
            self.keys[key] = text
        else:
            assert list(region.entries) == before  # a refused write leaves it untouched

    @rule(key=st.sampled_from("abcde"))
    def delete_fact(self, key: str) -> None:
        outcome = self.engine.handle_tool_call("context_delete", {"region": "facts", "key": key})
        if outcome.ok:
            self.keys.pop(key, None)

    @rule(text=st.text(min_size=1, max_size=40))
    def todo(self, text: str) -> None:
        outcome = self.engine.handle_tool_call("todo_add", {"text": text})
        if outcome.ok:
            self.items.add(outcome.data["item_id"])

    @rule(
        name=st.sampled_from(["context_write", "context_delete", "todo_done", "bogus"]),
        args=st.dictionaries(
            st.sampled_from(["region", "key", "index", "text"]),
            st.text(max_size=8) | st.integers(-3, 10**30),
        ),
    )
    def bad_tool_call(self, name: str, args: dict[str, Any]) -> None:
        snapshot = {k: v for k, v in self.keys.items()}
        outcome = self.engine.handle_tool_call(name, args)
        assert isinstance(outcome.text, str) and outcome.text
        if outcome.ok and name == "context_write" and args.get("region") == "facts":
            self.keys[str(args.get("key"))] = str(args["text"])
        if outcome.ok and name == "context_delete":
            self.keys = {k: v for k, v in snapshot.items() if self._has_key(k)}

    def _has_key(self, key: str) -> bool:
        return any(e.key == key for e in self.engine.window.region("facts").entries)

    @rule()
    def save_and_load(self) -> None:
        first = self._bytes()
        loaded = Engine.load(self.engine.save(self.dir / "state.json"))
        assert json.dumps(loaded.request()[1], sort_keys=True) == first
        assert self._bytes() == first

    # ----- invariants --------------------------------------------------------------------
    def _bytes(self) -> str:
        return json.dumps(self.engine.request()[1], sort_keys=True)

    @invariant()
    def requests_are_sound(self) -> None:
        engine = self.engine
        _req, payload = engine.request()
        assert engine.budget.calibrated(engine.state.last_estimate) <= engine.budget.limit
        text = json.dumps(payload, sort_keys=True)
        assert text.count('"cache_control"') <= 4
        assert self._bytes() == text  # same state, same bytes
        seen_uses: set[str] = set()
        answered: dict[str, list[str]] = {}
        reports: dict[str, list[str]] = {}
        for _role, block in _blocks(payload):
            label = block.get("text", "").partition(";")[0]
            if label.startswith("[progress report of tool call "):
                reports.setdefault(label.removeprefix("[progress report of tool call "), [])
                reports[label.removeprefix("[progress report of tool call ")].append(block["text"])
            if block.get("type") == "tool_use":
                seen_uses.add(block["id"])
            elif block.get("type") == "tool_result":
                assert block["tool_use_id"] in seen_uses, block["tool_use_id"]
                content = block["content"]
                text = content if isinstance(content, str) else content[0]["text"]
                answered.setdefault(block["tool_use_id"], []).append(text)
        assert seen_uses - set(answered) <= set(self.pending)
        for cid, texts in answered.items():
            assert len(texts) == 1, cid  # exactly one tool_result per tool_use
            if cid in self.reported:  # the call's bytes stay; its latest report is a text
                assert texts == [RUNNING_RESULT], cid
                assert len(reports.get(cid, [])) == 1, cid
                assert reports[cid][0].endswith("\n" + self.latest[cid]), cid
            elif cid in self.latest:
                assert texts == [self.latest[cid]], cid  # the latest result is rendered
        assert set(reports) <= self.reported  # no report of a finished call is rendered
        for cid in self.pending:  # a pending call's group is open and still in the window
            assert call_is_open(engine, cid), cid

    @invariant()
    def nothing_is_silently_lost(self) -> None:
        w = self.engine.window
        assert "You are careful." in w.region("system").render_text()
        held = {e.key: e.text for e in w.region("facts").entries}
        for key, text in self.keys.items():
            assert held.get(key) == text, key
        items = {e.key for e in w.region("todo").entries}
        assert self.items <= items
        history = w.region("history").entries
        if history:
            self.had_summary = True
        assert history or not self.had_summary


EngineMachine.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_engine_state_machine = EngineMachine.TestCase
