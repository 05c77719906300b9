"""What the relief chain did in one session (saved with the engine inside
:class:`regio.runtime.compactor.CompactionBook`): per stage how often it ran, how often it was
skipped below its minimum and the tokens it freed; and the full text of every tool result that
was changed on admission (trimmed to ``max_result_tokens`` or routed to a region), so
``context_restore`` can bring it back byte for byte (the transcript holds the others)."""

from __future__ import annotations

import msgspec

from regio.content import ToolResult

__all__ = ["STAGES", "ReliefBook", "StageTally"]

#: Stages of the chain in report order: ``dedupe``, ``clear`` and ``trim`` run under token
#: pressure; ``admit_trim`` (``max_result_tokens``) and ``route`` run on admission.
STAGES = ("dedupe", "clear", "trim", "admit_trim", "route")


class StageTally(msgspec.Struct):
    """One stage: ``runs`` (batches applied), ``skipped`` (times it would have freed less than
    its minimum, so it did not run), ``freed_tokens`` (tokens) and ``blocks`` edited."""

    runs: int = 0
    skipped: int = 0
    freed_tokens: int = 0
    blocks: int = 0


class ReliefBook(msgspec.Struct):
    """``stages``: stage name -> :class:`StageTally`; ``originals``: call id -> the tool
    result as received, for results changed on admission (the transcript holds the others)."""

    stages: dict[str, StageTally] = msgspec.field(default_factory=dict)
    originals: dict[str, ToolResult] = msgspec.field(default_factory=dict)

    def tally(self, stage: str) -> StageTally:
        """The tally of ``stage`` (created on first use)."""
        return self.stages.setdefault(stage, StageTally())
