"""Shared helpers of the regions tests: stub counters, message builders, custom hooks."""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence

import attrs

from regio.content import Block, Entry, Message, ToolResult, ToolUse, block_text
from regio.regions import Region

_SIZE = re.compile(r"\[(\d+)\]")


def declared_size(blocks: Iterable[Block]) -> int:
    """The size declared as a trailing ``[N]`` in the blocks' text, else 1 per word."""
    text = " ".join(block_text(b) for b in blocks)
    m = _SIZE.search(text)
    return int(m.group(1)) if m else max(1, len(text.split()))


@attrs.define
class StubCounter:
    """Returns the declared size of each entry and counts how often it is called."""

    name: str = "stub"
    calls: int = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return declared_size([ToolResult("x", text)])

    def count_blocks(self, blocks: Iterable[Block]) -> int:
        self.calls += 1
        return declared_size(blocks)

    def count_entry(self, entry: Entry) -> int:
        self.calls += 1
        return declared_size(entry.blocks)


def validate_conversation(messages: Sequence[Message]) -> None:
    """Raise ValueError unless ``messages`` is a valid conversation (FC-02 stub rules)."""
    if messages and messages[0].tool_results:
        raise ValueError("slice starts with a tool result")
    open_calls: set[str] = set()
    seen: set[str] = set()
    for m in messages:
        for b in m.blocks:
            if isinstance(b, ToolUse):
                open_calls.add(b.id)
                seen.add(b.id)
            elif isinstance(b, ToolResult):
                if b.tool_use_id not in seen:
                    raise ValueError(f"result for {b.tool_use_id} before its call")
                open_calls.discard(b.tool_use_id)
    if open_calls:
        raise ValueError(f"calls without results: {sorted(open_calls)}")


@attrs.define
class ProviderBackedCounter(StubCounter):
    """FC-02: ``count_messages`` raises on a slice that is not a valid conversation."""

    slices: list[int] = attrs.field(factory=list)

    def count_messages(self, messages: Sequence[Message]) -> int:
        validate_conversation(messages)
        self.slices.append(len(messages))
        return sum(declared_size(m.blocks) for m in messages)


def u(text: str) -> Message:
    return Message.user(text)


def a(text: str = "", *calls: str) -> Message:
    return Message.assistant(text, tool_calls=[ToolUse(c, "tool", {"q": c}) for c in calls])


def t(call: str, text: str) -> Message:
    return Message.tool([ToolResult(call, text)])


def texts(region: Region) -> list[str]:
    """The first word of each entry's text (its label, e.g. ``u1``) or its tool result id."""
    out = []
    for e in region.entries:
        label = e.text.split()[0] if e.text.split() else ""
        out.append(label)
    return out


def check_units(entries: Sequence[Entry]) -> None:
    """Every tool result's call is present and earlier, and every call is answered or its
    group is open at the end (no unit split)."""
    calls: set[str] = set()
    for e in entries:
        for b in e.blocks:
            if isinstance(b, ToolUse):
                calls.add(b.id)
            elif isinstance(b, ToolResult):
                assert b.tool_use_id in calls, f"orphan result {b.tool_use_id}"


# ----- custom hooks (imported by module:function in tests) -------------------------------------
def render_upper(region: Region) -> str:
    return "\n".join(e.text.upper() for e in region.entries)


def refuse_secrets(region: Region, entry: Entry) -> Entry | None:
    return None if "secret" in entry.text else entry


def drop_largest(region: Region, tokens_to_free: int) -> list[str]:
    out, freed = [], 0
    for e in sorted(region.entries, key=lambda e: -e.tokens):
        if freed >= tokens_to_free:
            break
        out.append(e.id)
        freed += e.tokens
    return out


# ----- generated histories and well-formedness (FC-33, P1) ---------------------------------------
def generated_history(rng: random.Random, turns: int) -> list[Message]:
    """FC-33 generator: ``turns`` turns cycling through a plain turn, a single-call turn, a
    parallel turn and a two-round tool turn (sizes from ``rng``; fixed seeds in tests)."""
    msgs: list[Message] = []
    for i in range(turns):
        shape = i % 4
        n = i + 1
        msgs.append(u(f"u{i} [{rng.randint(1, 9)}]"))
        if shape == 0:
            msgs.append(a(f"a{i} [{rng.randint(1, 9)}]"))
        elif shape == 1:
            msgs += [
                a(f"a{i} [3]", f"c{n}"),
                t(f"c{n}", f"r{n} [{rng.randint(1, 30)}]"),
                a(f"b{i} [2]"),
            ]
        elif shape == 2:
            msgs += [
                a(f"a{i} [3]", f"c{n}", f"d{n}"),
                t(f"c{n}", f"r{n} [7]"),
                t(f"d{n}", f"s{n} [5]"),
                a(f"b{i} [2]"),
            ]
        else:
            msgs += [
                a(f"a{i} [3]", f"c{n}"),
                t(f"c{n}", f"r{n} [4]"),
                a(f"e{i} [3]", f"x{n}"),
                t(f"x{n}", f"y{n} [4]"),
                a(f"b{i} [2]"),
            ]
    return msgs


def assert_well_formed(kept: Sequence[Message], full: Sequence[Message]) -> None:
    """W and L (field-cases.md section 0) of a kept list of contiguous groups: the first message
    is not a tool result; every assistant message with calls is followed directly by the
    messages answering exactly those calls (unless the call is still open in ``full``); no tool
    message follows a user message; each call and result is kept with its partner."""
    answered_in_full = {b.tool_use_id for m in full for b in m.tool_results}
    if kept:
        assert not kept[0].tool_results, "L: the first message is a tool result"
    i = 0
    while i < len(kept):
        m = kept[i]
        if m.role == "user" and i + 1 < len(kept):
            assert kept[i + 1].role != "tool", "W-O 3: a tool message right after a user message"
        calls = [c.id for c in m.tool_calls]
        if calls:
            j, got = i + 1, []
            while j < len(kept) and kept[j].tool_results and not kept[j].tool_calls:
                got.extend(b.tool_use_id for b in kept[j].tool_results)
                j += 1
            expected = [c for c in calls if c in answered_in_full]
            assert sorted(got) == sorted(expected), f"W: calls {calls} answered by {got}"
            i = j
            continue
        assert not m.tool_results, f"W: orphan results {[b.tool_use_id for b in m.tool_results]}"
        i += 1
