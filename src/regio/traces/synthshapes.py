"""The shapes of the long-session generator beside today's coding session.

A **shape** (:class:`Shape`, named in :data:`SHAPES`) changes the structure of a generated
session; every size it does not name is still drawn from the :class:`SynthProfile` measured on
the real runs (:mod:`regio.traces.synthprofile`). The shapes are the session families the
bench is judged on (``docs/traces.md``, "Shapes"):

* ``coding`` — today's generator (:func:`regio.traces.synth.synthesize`): one tool call per
  reply, the real runs' output sizes, one task per profile episode;
* ``parallel`` — 2 to 4 tool calls per reply answered in one message, each result 2,500 to
  6,500 tokens (log-uniform), so one turn's results often pass half of a 32k window and
  always fit it (at most 26,000 tokens);
* ``bigtool`` — one call per reply, every result 2,000 to 20,000 tokens (log-uniform);
* ``reread`` — ten files read again and again (70% of the calls read one of them, by a
  Zipf-like preference, 10% edit one so later reads see the new text), each file 1,500 to
  6,000 tokens;
* ``chat`` — 80% of the model calls are long prose replies followed by a long user turn
  (both drawn from the real runs' task messages, 2k–4.4k characters), the rest tool calls;
* ``solo`` — few user messages: one task per 250 calls, every other call a tool call.

The real runs hold no parallel call, no result over 9,074 characters and no assistant reply
over 1,246 characters (``docs/traces.md`` gives the measured figures), so those sizes are
declared here, with the issue that asked for them, rather than measured. Everything else
(system prompt, task messages, prose beside an action, action inputs, the coding outputs,
line length, status footers) is drawn from the profile exactly as the coding shape draws it.
Only the ``random.Random`` passed in is used: a shape is deterministic per seed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import attrs

from regio.traces.builder import CallSpec, ResultSpec, TraceBuilder
from regio.traces.synthprofile import SynthProfile

__all__ = ["CHARS_PER_TOKEN", "SHAPES", "Shape", "ShapeSession", "shape_names"]

#: Characters per o200k token of the generator's text (measured on its outputs: 3.59; the
#: real outputs measure 3.51). Token sizes a shape declares are turned into characters with it.
CHARS_PER_TOKEN = 3.59


@attrs.frozen
class Shape:
    """One session family (module doc). Token ranges are ``(low, high)`` drawn log-uniform.

    ``fanout``: tool calls per tool-calling reply, drawn uniformly from the tuple;
    ``result_tokens``: each result's size (``None``: the profile's output samples);
    ``files`` / ``file_tokens``: the files a ``reread`` session reads again (0: none);
    ``reread_share`` / ``edit_share``: shares of tool calls that read / edit one of them;
    ``chat_share``: share of model calls that are a prose reply answered by a user turn;
    ``calls_per_task``: model calls per user task (``None``: the profile's episode lengths);
    ``footers``: results end with the status footer at the profile's share.
    """

    name: str
    summary: str
    fanout: tuple[int, ...] = (1,)
    result_tokens: tuple[int, int] | None = None
    files: int = 0
    file_tokens: tuple[int, int] = (1500, 6000)
    reread_share: float = 0.0
    edit_share: float = 0.0
    chat_share: float = 0.0
    calls_per_task: int | None = None
    footers: bool = True


#: The shapes by name, in the order ``regio traces synth --shape`` lists them.
SHAPES: dict[str, Shape] = {
    s.name: s
    for s in (
        Shape("coding", "one call per reply, the real runs' output sizes (today's generator)"),
        Shape(
            "parallel",
            "2-4 parallel calls per reply, each result 2,500-6,500 tokens",
            fanout=(2, 3, 4),
            result_tokens=(2500, 6500),
        ),
        Shape("bigtool", "every result 2,000-20,000 tokens", result_tokens=(2000, 20000)),
        Shape(
            "reread",
            "ten files of 1,500-6,000 tokens read again and again (70% reads, 10% edits)",
            fanout=(1, 1, 2),
            files=10,
            reread_share=0.7,
            edit_share=0.1,
        ),
        Shape(
            "chat",
            "80% long prose replies each answered by a long user turn",
            chat_share=0.8,
            footers=False,
        ),
        Shape("solo", "few user messages: one task per 250 calls", calls_per_task=250),
    )
}


def shape_names() -> tuple[str, ...]:
    """The shape names (``--shape`` choices)."""
    return tuple(SHAPES)


def _log_uniform(rng: random.Random, low: int, high: int) -> int:
    return round(math.exp(rng.uniform(math.log(low), math.log(high))))


@attrs.define
class ShapeSession:
    """Writes one session of a non-coding shape into ``builder`` (see :func:`run`).

    ``write`` is the generator's text writer (``text(chars, prose=...)``, ``ident()``,
    ``path()``); ``draw(samples, floor)`` draws a profile length with the session's jitter."""

    shape: Shape
    profile: SynthProfile
    rng: random.Random
    builder: TraceBuilder
    write: Any
    draw: Callable[..., int]
    names: list[str]
    weights: list[int]
    workdir: str = ""
    open_file: str = "n/a"
    files: list[tuple[str, str]] = attrs.field(factory=list)

    def run(self, calls: int) -> int:
        """Make exactly ``calls`` model calls; returns the number of user tasks."""
        self.workdir = "/" + self.write.ident()
        for _ in range(self.shape.files):
            size = _log_uniform(self.rng, *self.shape.file_tokens)
            path = f"{self.workdir}/{self.write.path()}"
            self.files.append((path, self.write.text(round(size * CHARS_PER_TOKEN))))
        made = tasks = 0
        while made < calls:
            tasks += 1
            length = self._task_length(calls - made)
            self.builder.user(f"Task {tasks}: " + self._long_text(20))
            for k in range(length):
                last = k == length - 1
                self._call(made, last)
                made += 1
        return tasks

    def _task_length(self, left: int) -> int:
        if self.shape.calls_per_task is not None:
            return min(self.shape.calls_per_task, left)
        return min(self.draw(self.profile.episode_calls, 0.0, 1), left)

    def _long_text(self, floor: int) -> str:
        return self.write.text(self.draw(self.profile.task_chars, None, floor))

    def _call(self, index: int, last: bool) -> None:
        rng = self.rng
        if last:
            self.builder.assistant(self._prose() or "Done.", record=index)
            return
        if self.shape.chat_share and rng.random() < self.shape.chat_share:
            self.builder.assistant(self._long_text(40), record=index)
            self.builder.user(self._long_text(20))
            return
        fanout = rng.choice(self.shape.fanout)
        calls, outputs = [], []
        for _ in range(fanout):
            name, command, output = self._action()
            calls.append(CallSpec(None, name, {"command": command}))
            outputs.append(output)
        self.builder.assistant(self._prose(), calls, record=index)
        if self.shape.footers and rng.random() < self.profile.footer_share:
            outputs[-1] += self._footer()
        self.builder.tool_results([ResultSpec(None, o) for o in outputs], record=index + 1)

    def _prose(self) -> str:
        return str(self.write.text(self.draw(self.profile.thought_chars, None, 0), prose=True))

    def _action(self) -> tuple[str, str, str]:
        """(tool name, command, output) of one tool call."""
        rng = self.rng
        if self.files:
            roll = rng.random()
            if roll < self.shape.reread_share:
                k = self._file_index()
                path, text = self.files[k]
                return "cat", f"cat {path}", text
            if roll < self.shape.reread_share + self.shape.edit_share:
                k = self._file_index()
                path, text = self.files[k]
                lines = text.split("\n")
                at = rng.randrange(len(lines))
                lines[at : at + 3] = self.write.text(120).split("\n")
                self.files[k] = (path, "\n".join(lines))
                return "edit", f"edit {path} {at + 1}", f"File updated: {path} (line {at + 1})"
        name = rng.choices(self.names, self.weights)[0]
        args = self.write.text(self.draw(self.profile.action_chars, None, 1), prose=True)
        if self.shape.result_tokens is not None:
            chars = round(_log_uniform(rng, *self.shape.result_tokens) * CHARS_PER_TOKEN)
        else:
            chars = self.draw(self.profile.output_chars, None, 0)
        return name, f"{name} {args}", self.write.text(chars)

    def _file_index(self) -> int:
        """One of the files, the first ones preferred (weights 1/(k+1))."""
        weights = [1.0 / (k + 1) for k in range(len(self.files))]
        return int(self.rng.choices(range(len(self.files)), weights)[0])

    def _footer(self) -> str:
        if self.open_file == "n/a" or self.rng.random() < self.profile.open_file_change_share:
            self.open_file = f"{self.workdir}/{self.write.path()}"
        return f"\n(Open file: {self.open_file})\n(Current directory: {self.workdir})\nbash-$"
