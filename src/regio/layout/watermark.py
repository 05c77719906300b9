"""Watermarks of the conversation projection: where the render log may stop repairing.

A *watermark* is a point of the projected conversation after which nothing can change how the
messages before it are repaired (:func:`regio.layout.repair.repair_after` resumes there):
every call made before it is answered before it, or decided missing by a user text, or its
latest result is a progress report (its shell shows
:data:`regio.layout.repair.RUNNING_RESULT` whichever report comes). The render log
(:mod:`regio.layout.renderlog`) moves its watermark over each request's new messages. The
messages read here have their call ids named as the repair names them
(:func:`regio.layout.repair.named`).
"""

from __future__ import annotations

from collections.abc import Sequence

from regio.content import Text, ToolResult, ToolUse

from .repairstate import PMessage, RepairFront, is_frozen

__all__ = ["reporting", "watermarks"]


def _user_text_input(m: PMessage) -> bool:
    """Whether input ``m`` is a user text once cleaned and deduplicated (:func:`_is_user_text`
    of what rules 1 and 2 leave of it)."""
    return (
        m.role == "user"
        and not is_frozen(m)
        and any(
            not isinstance(b, (ToolResult, ToolUse)) and not (isinstance(b, Text) and not b.text)
            for b in m.blocks
        )
    )


def reporting(messages: Sequence[PMessage]) -> set[str]:
    """The call ids whose latest result in ``messages`` is a progress report (what
    :func:`repair_after` takes as ``later`` for the messages after a watermark)."""
    latest: dict[str, bool] = {}
    for m in messages:
        for b in m.blocks:
            if isinstance(b, ToolResult):
                latest[b.tool_use_id] = b.is_final
    return {c for c, final in latest.items() if not final}


def _results_after_calls(
    messages: Sequence[PMessage], front: RepairFront
) -> tuple[dict[str, bool], dict[str, int]]:
    """Per call made in ``messages`` (or tracked by ``front.progress``) and answered after
    it: whether its latest result is final, and where its first result is."""
    made: dict[str, int] = {}
    final: dict[str, bool] = {}
    first: dict[str, int] = {}
    for p, m in enumerate(messages):
        for b in m.blocks:
            if isinstance(b, ToolUse) and m.role == "assistant" and b.id not in front.calls:
                made.setdefault(b.id, p)
            elif isinstance(b, ToolResult):
                cid = b.tool_use_id
                if made.get(cid, p) < p or cid in front.progress:
                    final[cid] = b.is_final
                    first.setdefault(cid, p)
    return final, first


def watermarks(messages: Sequence[PMessage], front: RepairFront) -> list[int]:
    """The input positions ``p`` (``0 < p <= len(messages)``) after which no call made in
    ``messages[:p]`` is still open: each is answered in ``messages[:p]`` or a user text follows
    it there, and no later message of ``messages`` answers a call so decided missing or
    brings a later result of a call answered before it. A call whose latest result is a
    progress report (``ToolResult(final=False)``) does not hold a cut back (the run before
    the cut renders :data:`RUNNING_RESULT` for it: ``repair_after(later=...)``), but all its
    results stay on one side of every cut."""
    open_at: dict[str, int] = {}
    decided: dict[str, int] = {}
    closed: dict[str, int] = {}
    seen = set(front.calls)
    final, first = _results_after_calls(messages, front)
    marks: list[int] = []
    for p, m in enumerate(messages):
        for b in m.blocks:
            if isinstance(b, ToolUse) and m.role == "assistant" and b.id not in seen:
                seen.add(b.id)
                if final.get(b.id, True):
                    open_at[b.id] = p
            elif isinstance(b, ToolResult):
                cid = b.tool_use_id
                if not final.get(cid, True) or cid in front.progress:
                    if p > first[cid]:  # its results stay together
                        marks = [q for q in marks if q <= first[cid]]
                elif open_at.get(cid, p) < p:
                    if b.is_final:
                        closed[cid] = open_at.pop(cid)
                elif cid in decided or cid in closed:
                    # a late or later result (the latest is rendered): cuts after its call
                    # were not safe
                    at = closed[cid] = decided.pop(cid) if cid in decided else closed[cid]
                    marks = [q for q in marks if q <= at]
        if _user_text_input(m):
            decided.update(open_at)
            open_at.clear()
        if not open_at:
            marks.append(p + 1)
    return marks
