"""Environment observations sent as user text: what marks them and how they are read.

Plain-text agents (SWE-agent's default mode, mini-swe-agent, OpenHands error observations)
send each environment observation -- a file view, a test run, a command's output -- as a
``user`` message. ``Engine.add_observation(text)`` (or ``add_user(..., observation=True)``,
``add_message(..., observation=True)``) admits one: its entry carries ``meta["observation"] =
True`` (:data:`OBSERVATION_META`), which saved states, session stores and the transcript keep
like every other annotation (an entry saved before the flag existed has no such key and is
read as the user's text, as it was then).

How the parts read an observation entry (``docs/runtime.md``, "Observations"):

* the summarizers (:mod:`regio.summarizers.kinds`,
  :class:`regio.summarizers.ExtractiveSummarizer`, :class:`regio.summarizers.LLMSummarizer`)
  read it exactly as tool output: error lines and the values it reports (``KEY: VALUE`` report
  lines, :func:`regio.summarizers.toolfacts.tool_facts`, kept with a tool's authority, never the
  user's) and its sentences that state a rule, a to-do or a value as quotes
  (:mod:`regio.summarizers.toolnotes`, with a tool's authority), never constraints, open items,
  preferences, goals or decisions, and it completes no to-do; its lines are labelled
  ``observation``, not ``user``;
* it is still a ``user`` message for everything structural: it is rendered as the agent sent
  it, starts a turn of the window (in a plain-text agent each observation is the next step),
  and the newest one is protected like the newest user message (the model has not answered
  it yet);
* it does not re-arm overflow recovery (``SessionState.overflow_retry``): like a tool result
  it is produced by the agent's loop, not typed by a person, so a loop that appends an error
  observation after each refusal still stops at the second refusal;
* the relief chain never clears or trims it, as it never clears or trims user text: a cleared
  placeholder names a tool call and ``context_restore`` finds the original by call id, and an
  observation has neither.
"""

from __future__ import annotations

from typing import Any

from regio.content import Entry, Message, ToolResult

__all__ = ["OBSERVATION_META", "is_observation", "observation_meta"]

#: The entry annotation marking an environment observation sent as a user message.
OBSERVATION_META = "observation"


def is_observation(entry: Entry) -> bool:
    """Whether ``entry`` is an environment observation (a ``user`` entry whose
    ``meta["observation"]`` is true)."""
    return entry.role == "user" and bool(entry.meta.get(OBSERVATION_META))


def observation_meta(message: Message, observation: bool) -> dict[str, Any] | None:
    """The entry annotations of ``message`` admitted with ``observation`` (``None``: none).
    Raises :class:`ValueError` when ``observation`` marks anything but a user message with
    text (an assistant message is the agent's own; tool results are tool output already)."""
    if not observation:
        return None
    if message.role != "user" or all(isinstance(b, ToolResult) for b in message.blocks):
        raise ValueError(
            f"observation=True marks a user message sent by the agent's environment; got a "
            f"{message.role} message" + (" of tool results only" if message.role == "user" else "")
        )
    return {OBSERVATION_META: True}
