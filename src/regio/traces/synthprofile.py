"""The measured shape of real coding sessions, the input of the long-session generator.

:func:`profile_from_traces` reads the bundled real coding runs (SWE-agent and mini-swe-agent,
``examples/traces``) and records, per trace or per model call, the empirical samples the
generator (:mod:`regio.traces.synth`) draws from:

* ``system_chars`` / ``task_chars``: length of each run's system prompt and first user message;
* ``episode_calls``: model calls per run (one run = one task);
* ``thought_chars``: the prose of each assistant reply (the text before the action block for
  plain-text agents, the text beside the tool_use for function-calling ones);
* ``action_chars``: the action itself (the command in the ```` ``` ```` block, or the
  canonical JSON ``input`` of the tool_use);
* ``tool_names``: the action's tool (``open``, ``edit``, ``python``... the command's first
  word for plain-text agents, the tool_use name otherwise), with counts;
* ``output_chars``: each tool output / observation without its status footer;
* ``line_chars``: the mean line length of those outputs;
* ``footer_share``: share of outputs that end with SWE-agent's status footer
  (``(Open file: …)`` / ``(Current directory: …)``), the state replay captures into a region;
  ``open_file_change_share``: among consecutive footers, the share whose open file changed (a
  region write that differs from the previous one).

The shipped profile (:data:`CODING_PROFILE`, in :mod:`regio.traces.synthdata`) is what this
function returns on the bundled runs; a test checks they agree. Regenerate it with
``python -m regio.traces.synthprofile`` after changing the bundled runs.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import msgspec

from regio.content import Text, ToolUse, canonical_json
from regio.traces.format import AssistantMessage, ToolResults, Trace, UserMessage

__all__ = ["CODING_SOURCES", "SynthProfile", "coding_profile", "profile_from_traces"]

#: Trace id prefixes of the bundled runs that are coding sessions.
CODING_SOURCES = ("swe-agent/", "mini-swe-agent/")

_FOOTER = re.compile(
    r"\n*\(Open file: (?P<file>[^\n]*)\)\n\(Current directory: [^\n]*\)\n?(?:bash-\$)?\s*\Z"
)
_ACTION = re.compile(r"```[a-z_]*\n(?P<body>.*?)```", re.S)


class SynthProfile(msgspec.Struct, frozen=True):
    """Empirical samples of real coding sessions (lengths in characters; see module doc)."""

    sources: tuple[str, ...]
    system_chars: tuple[int, ...]
    task_chars: tuple[int, ...]
    episode_calls: tuple[int, ...]
    thought_chars: tuple[int, ...]
    action_chars: tuple[int, ...]
    tool_names: dict[str, int]
    output_chars: tuple[int, ...]
    line_chars: float
    footer_share: float
    open_file_change_share: float


def _split_action(text: str) -> tuple[str, str]:
    """(prose, action command) of a plain-text agent reply; the action is the last fence."""
    matches = list(_ACTION.finditer(text))
    if not matches:
        return text, ""
    last = matches[-1]
    return text[: last.start()].rstrip(), last.group("body").strip()


class _Acc:
    def __init__(self) -> None:
        self.thought: list[int] = []
        self.action: list[int] = []
        self.names: Counter[str] = Counter()
        self.output: list[int] = []
        self.lines = 0
        self.footers = 0
        self.changes = 0
        self.pairs = 0

    def reply(self, event: AssistantMessage) -> None:
        text = "".join(b.text for b in event.blocks if isinstance(b, Text))
        calls = [b for b in event.blocks if isinstance(b, ToolUse)]
        if calls:
            self.thought.append(len(text))
            for call in calls:
                self.action.append(len(canonical_json(call.input)))
                self.names[call.name] += 1
            return
        prose, action = _split_action(text)
        self.thought.append(len(prose))
        if action:
            self.action.append(len(action))
            self.names[action.split()[0]] += 1

    def output_text(self, text: str, last_file: str | None) -> str | None:
        match = _FOOTER.search(text)
        body = text[: match.start()] if match else text
        self.output.append(len(body))
        self.lines += body.count("\n") + 1
        if match is None:
            return last_file
        self.footers += 1
        if last_file is not None:
            self.pairs += 1
            self.changes += match.group("file") != last_file
        return match.group("file")


def profile_from_traces(traces: Iterable[Trace]) -> SynthProfile:
    """Measure a :class:`SynthProfile` from coding traces (see the module doc for each
    field). Raises ``ValueError`` when no trace has a model call."""
    acc = _Acc()
    sources: list[str] = []
    system: list[int] = []
    task: list[int] = []
    episodes: list[int] = []
    for trace in traces:
        calls = sum(isinstance(e, AssistantMessage) for e in trace.events)
        if not calls:
            continue
        sources.append(trace.id)
        system.append(len(trace.system_prompt))
        episodes.append(calls)
        first = next(e for e in trace.events if isinstance(e, UserMessage))
        task.append(sum(len(b.text) for b in first.blocks))
        last_file: str | None = None
        for event in trace.events:
            if isinstance(event, AssistantMessage):
                acc.reply(event)
            elif isinstance(event, ToolResults):
                for result in event.results:
                    content = result.content if isinstance(result.content, str) else ""
                    last_file = acc.output_text(content, last_file)
            elif isinstance(event, UserMessage) and event.observation:
                last_file = acc.output_text("".join(b.text for b in event.blocks), last_file)
    if not sources:
        raise ValueError("no trace with a model call to measure")
    total_chars = sum(acc.output)
    return SynthProfile(
        sources=tuple(sources),
        system_chars=tuple(system),
        task_chars=tuple(task),
        episode_calls=tuple(episodes),
        thought_chars=tuple(acc.thought),
        action_chars=tuple(acc.action),
        tool_names=dict(sorted(acc.names.items())),
        output_chars=tuple(acc.output),
        line_chars=round(total_chars / max(acc.lines, 1), 3),
        footer_share=round(acc.footers / max(len(acc.output), 1), 4),
        open_file_change_share=round(acc.changes / max(acc.pairs, 1), 4),
    )


def coding_profile() -> SynthProfile:
    """The profile measured from the bundled coding runs (requires ``examples/traces``, see
    :func:`regio.traces.bundled_traces_dir`)."""
    from regio.traces.bundled import load_bundled_traces

    traces = [t for r in load_bundled_traces() for t in r.traces if t.id.startswith(CODING_SOURCES)]
    return profile_from_traces(traces)


def _write_module(path: Path) -> None:
    data = msgspec.json.format(msgspec.json.encode(coding_profile()), indent=1).decode()
    path.write_text(
        '"""The shipped coding-session profile, generated by\n'
        "``python -m regio.traces.synthprofile`` from the bundled runs (see\n"
        ':mod:`regio.traces.synthprofile`). Do not edit by hand."""\n\n'
        "# fmt: off\n"
        f"CODING_PROFILE_JSON = r'''{data}'''\n",
        encoding="utf-8",
    )


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    _write_module(Path(__file__).with_name("synthdata.py"))
    sys.exit(0)
