"""The context tools' schemas: which tools an engine offers (:func:`offered_tool_specs`, under
``EngineOptions.context_tools``) and the :class:`regio.layout.ToolSpec` of each
(:func:`context_tool_specs`, :data:`RESTORE_SPEC`). Handling a call is
:mod:`regio.engine._tools`; the schemas live apart so the relief chain and the budget can read
what is offered without importing the handlers."""

from __future__ import annotations

from typing import Any

from regio.layout import ToolSpec
from regio.regions import Checklist, Window

__all__ = [
    "RESTORE_SPEC",
    "checklist_regions",
    "context_tool_specs",
    "offered_tool_specs",
    "restore_offered",
    "writable_regions",
]


def _str(desc: str) -> dict[str, Any]:
    return {"type": "string", "description": desc}


def _enum(values: list[str], desc: str) -> dict[str, Any]:
    return {"type": "string", "enum": values, "description": desc}


def _params(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    """The JSON Schema ``object`` of a tool's input: ``properties``, and ``required`` naming
    the ones every call must give
    (https://json-schema.org/understanding-json-schema/reference/object)."""
    schema: dict[str, Any] = {"type": "object"}
    if required:
        schema["required"] = list(required)
    schema["properties"] = properties
    return schema


def _int(desc: str) -> dict[str, Any]:
    return {"type": "integer", "minimum": 0, "description": desc}


def writable_regions(window: Window) -> list[str]:
    return [r.name for r in window.regions if r.agent_writable]


def checklist_regions(window: Window) -> list[str]:
    return [r.name for r in window.regions if r.kind == Checklist.kind]


def context_tool_specs(window: Window) -> list[ToolSpec]:
    """The tool definitions (JSON Schema ``input_schema``), in a fixed order. Region names are
    listed as ``enum`` s so the model sees what exists; tools with no target region (no
    checklist, no writable region) are left out."""
    writable = writable_regions(window)
    lists = checklist_regions(window)
    specs = _write_specs(writable) if writable else []
    specs += _region_specs([r.name for r in window.regions])
    if lists:
        specs += _todo_specs(lists)
    specs.append(
        ToolSpec(
            "compact",
            "Summarize older context to free room before your next "
            "turn. Optional instructions say what the summary must keep.",
            _params({"instructions": _str("What to keep.")}),
        )
    )
    return specs


#: ``context_restore``: offered with the relief chain (:mod:`regio.compaction.relief._chain`).
RESTORE_SPEC = ToolSpec(
    "context_restore",
    "Bring back the full result of an earlier tool call that was cleared, trimmed or moved "
    "to save context; it comes back as the result of this call.",
    _params({"call_id": _str("The call id the placeholder names.")}, "call_id"),
)


def offered_tool_specs(
    window: Window, mode: str | tuple[str, ...], relief: object = None
) -> list[ToolSpec]:
    """The context tools an engine offers under ``EngineOptions.context_tools`` ``mode``:
    ``"all"`` every one :func:`context_tool_specs` applies to ``window``; ``"auto"`` the same
    when some region is agent-writable, none otherwise (an agent with nothing to write has
    nothing to release or compact on its own); ``"none"`` no tool; a tuple of names the
    applicable ones among them. With ``relief`` (an ``EngineOptions.relief`` policy whose
    ``restore_tool`` is on) ``context_restore`` is offered under every mode (the relief
    placeholders point at it), except a tuple that does not name it. Each offered schema is
    sent with every request, so an agent that never calls them pays for them
    (docs/benchmark.md measures it)."""
    restore = [RESTORE_SPEC] if restore_offered(mode, relief) else []
    if mode == "none" or (mode == "auto" and not writable_regions(window)):
        return restore
    specs = context_tool_specs(window) + restore
    if isinstance(mode, tuple):
        return [s for s in specs if s.name in mode]
    return specs


def restore_offered(mode: str | tuple[str, ...], relief: object = None) -> bool:
    """Whether :func:`offered_tool_specs` offers ``context_restore`` under ``mode`` and
    ``relief``, without building any schema: a policy with ``restore_tool`` on, under every
    mode but a tuple that does not name it (it depends on no region)."""
    if not getattr(relief, "restore_tool", False):
        return False
    return not isinstance(mode, tuple) or "context_restore" in mode


def _write_specs(writable: list[str]) -> list[ToolSpec]:
    region_w = _enum(writable, "Region to write.")
    return [
        ToolSpec(
            "context_write",
            "Write a note into a context region. In a keyed region "
            "the key replaces the previous value.",
            _params(
                {
                    "region": region_w,
                    "text": _str("The content."),
                    "key": _str("Key (keyed regions)."),
                },
                "region",
                "text",
            ),
        ),
        ToolSpec(
            "context_append",
            "Append text to a context region.",
            _params({"region": region_w, "text": _str("The content.")}, "region", "text"),
        ),
    ]


def _region_specs(every: list[str]) -> list[ToolSpec]:
    region_any = _enum(every, "Region name.")
    return [
        ToolSpec(
            "context_read",
            "Read a region, or one key of it.",
            _params({"region": region_any, "key": _str("Only this key.")}, "region"),
        ),
        ToolSpec(
            "context_delete",
            "Release entries from a region to free room: by key, by index, or the oldest N.",
            _params(
                {
                    "region": region_any,
                    "key": _str("Key to release."),
                    "index": _int("Entry index (0 = oldest)."),
                    "oldest": _int("Release the oldest N entries."),
                },
                "region",
            ),
        ),
        ToolSpec(
            "context_list",
            "List the regions with their use, budget and whether you may write them.",
            _params({}),
        ),
    ]


def _todo_specs(lists: list[str]) -> list[ToolSpec]:
    region_c = _enum(lists, "Checklist region.")
    return [
        ToolSpec(
            "todo_add",
            "Add an open item to the plan.",
            _params({"text": _str("The item."), "region": region_c}, "text"),
        ),
        ToolSpec(
            "todo_done",
            "Mark an item done.",
            _params({"item_id": _str("Item id."), "region": region_c}, "item_id"),
        ),
        ToolSpec(
            "todo_note",
            "Add a note to an item.",
            _params(
                {
                    "item_id": _str("Item id."),
                    "note": _str("The note."),
                    "region": region_c,
                },
                "item_id",
                "note",
            ),
        ),
    ]
