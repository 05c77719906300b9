"""Captures: the blueprint's ``capture`` rules, which file an agent's content into regions.

* :mod:`regio.capture.rules` -- the rule objects (:func:`rules_for` a blueprint), the region
  operations they make (:class:`RegionOp`) and a message with the moves that took text out of
  it (:class:`AddMessage`);
* :mod:`regio.capture.filing` -- applying those operations through engines, a refused one
  leaving the message as it was sent (:func:`file_moves`; an engine that raises one of
  :data:`ENGINE_ERRORS` goes to the caller's ``on_error``);
* :mod:`regio.capture.live` -- :class:`LiveCapture`: the rules on a live agent's system prompt
  and messages as they arrive (``regio proxy``).

The bench replays recorded traces through the same rules (:mod:`regio.bench.capture`).
Reference: ``docs/blueprint.md#capture``.
"""

from __future__ import annotations

from .filing import ENGINE_ERRORS, Filed, OnError, apply_all, apply_op, file_moves
from .live import BESIDE, LiveCapture
from .rules import (
    SWE_AGENT_FOOTER,
    TIME_LINE,
    AddMessage,
    CaptureRule,
    Extract,
    FooterRule,
    LookupRule,
    ParkRule,
    RegionOp,
    SystemPromptRule,
    add_moves,
    observe,
    rules_for,
)

__all__ = [
    "BESIDE",
    "ENGINE_ERRORS",
    "SWE_AGENT_FOOTER",
    "TIME_LINE",
    "AddMessage",
    "CaptureRule",
    "Extract",
    "Filed",
    "FooterRule",
    "LiveCapture",
    "LookupRule",
    "OnError",
    "ParkRule",
    "RegionOp",
    "SystemPromptRule",
    "add_moves",
    "apply_all",
    "apply_op",
    "file_moves",
    "observe",
    "rules_for",
]
