"""Small hand-made traces and blueprints for the bench tests."""

from __future__ import annotations

from typing import Any

from regio.bench.capture import SWE_AGENT_FOOTER
from regio.blueprint import load_blueprint
from regio.content import Text, ToolResult, ToolUse
from regio.traces.format import (
    AssistantMessage,
    Header,
    SystemPrompt,
    ToolResults,
    Trace,
    UserMessage,
)

_HEAD = r"""
version: 1
name: NAME
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 60000,
        max_output_tokens: 4000}
regions:
  - name: system
    kind: pinned
    volatility: stable
    budget: 8000
    capture: [{rule: system_prompt}]
"""

_CONVERSATION = """  - {name: conversation, kind: sliding_window, budget: "60%"}
"""


def _blueprint_text(name: str, regions: str) -> str:
    """The YAML of a blueprint ``name``: a 60,000-token Sonnet window, a stable pinned system
    region capturing the system prompt, then ``regions`` (YAML list items), then a 60%
    sliding-window conversation; ``SWE_AGENT_FOOTER`` in ``regions`` stands for the footer."""
    text = _HEAD.replace("NAME", name) + regions + _CONVERSATION
    return text.replace("SWE_AGENT_FOOTER", SWE_AGENT_FOOTER)


BLUEPRINT = _blueprint_text(
    "tiny",
    r"""  - name: env_state
    kind: pinned
    volatility: rewritten
    budget: 200
    capture:
      - rule: footer
        pattern: 'SWE_AGENT_FOOTER'
  - name: customer
    kind: keyed
    volatility: rewritten
    budget: 4000
    capture:
      - {rule: lookup, tools: [get_user_details], key: "user:{user_id}"}
      - {rule: lookup, tools: [get_reservation_details], key: "reservation:{reservation_id}"}
""",
)

_FOOTER_STATE = r"""  - name: env_state
    kind: keyed
    volatility: rewritten
    budget: STATE_BUDGET
    max_entries: 1
    capture:
      - {rule: footer, key: environment, pattern: 'SWE_AGENT_FOOTER'}
"""

_PARKED_OUTPUT = r"""  - name: tool_output
    kind: temporary
    volatility: grows
    budget: PARK_BUDGET
    admission: evict
    capture:
      - {rule: park, min_tokens: 60, keep: 1}
"""


def footer_state_blueprint(name: str, state_budget: int, park_budget: int | None = None) -> Any:
    """Blueprint ``name``: the system region, ``env_state`` (keyed, one entry, ``state_budget``
    tokens) capturing the SWE-agent footer, and, when ``park_budget`` (tokens) is given,
    ``tool_output`` (temporary, evicting) parking outputs of 60+ tokens (the newest kept),
    then the conversation."""
    regions = _FOOTER_STATE.replace("STATE_BUDGET", str(state_budget))
    if park_budget is not None:
        regions += _PARKED_OUTPUT.replace("PARK_BUDGET", str(park_budget))
    return load_blueprint(_blueprint_text(name, regions))


FOOTER = "\n(Open file: {f})\n(Current directory: /repo)\nbash-$"


def tiny_blueprint():  # type: ignore[no-untyped-def]
    return load_blueprint(BLUEPRINT)


def swe_trace(steps: int = 6, files: tuple[str, ...] = ("a.py", "b.py")) -> Trace:
    """A plain-text SWE-agent-like run: observations end with the environment footer."""
    events: list = [SystemPrompt(0.0, "You are a careful engineer. " * 300)]
    t = 0.0
    events.append(UserMessage(t, (Text("Fix the bug." + FOOTER.format(f="n/a")),)))
    for i in range(steps):
        t += 3.0
        events.append(AssistantMessage(t, (Text(f"step {i}: let me look\n```\nls\n```"),)))
        t += 2.0
        body = f"output {i} " * 40 + FOOTER.format(f=files[i % len(files)])
        events.append(UserMessage(t, (Text(body),), observation=True))
    return Trace(Header(id="tiny/swe", source_format="swe-agent"), tuple(events))


def tau_trace() -> Trace:
    """A tau-bench-like run with a lookup tool and a clock line in the system prompt."""
    events: list = [
        SystemPrompt(
            0.0, "# Policy\n\nThe current time is 2024-05-15 15:00:00 EST.\n\n" + "Rule. " * 400
        ),
        UserMessage(0.0, (Text("Hi, I am mia_li_3668."),)),
        AssistantMessage(2.0, (ToolUse("c1", "get_user_details", {"user_id": "mia_li_3668"}),)),
        ToolResults(4.0, (ToolResult("c1", '{"name": "Mia Li", "tier": "gold"}'),)),
        AssistantMessage(6.0, (Text("Hello Mia, how can I help?"),)),
        UserMessage(16.0, (Text("Change reservation ABC123."),)),
        AssistantMessage(
            18.0, (ToolUse("c2", "get_reservation_details", {"reservation_id": "ABC123"}),)
        ),
        ToolResults(20.0, (ToolResult("c2", '{"id": "ABC123", "flights": 2}'),)),
        AssistantMessage(22.0, (Text("Done."),)),
    ]
    return Trace(Header(id="tiny/tau", source_format="tau-bench"), tuple(events))
