"""The agent's context tools: definitions and their handler.

Tools: ``context_write``, ``context_append``, ``context_read``, ``context_delete``,
``context_list``, ``todo_add``, ``todo_done``, ``todo_note``, ``compact`` and, with the relief
chain, ``context_restore`` (the full result of a cleared call, appended as its tool result). Every
call returns a :class:`ContextToolOutcome` whose ``text`` is the tool result the agent sees.
Mistakes (unknown tool, bad arguments, a region the agent may not write) and refusals (a full
region) come back as text that says how full the region is, what can be released and which regions
are writable; they are never raised into the agent loop. Arguments are checked against the tool's
JSON schema first (:func:`regio.session._toolargs.check_arguments`: no unknown keys, required keys
present, types, minimums and enums), and a wrong one is named with the fix. Arguments are bounded
(nesting, integer digits, length) and every agent value quoted in a reply is cut to
``EngineOptions.tool_limits.echo_chars`` characters (default 200, :mod:`regio.session._toolargs`).
Any :class:`regio.errors.RegioError` a region raises for the call (a keyed region written without a
key, an unknown key, a protected entry) becomes such a reply too.

``compact`` runs mid-turn (inside the assistant's tool call), so it only *schedules* the
compaction: the engine flushes it at the next turn boundary (:meth:`Engine.request`), never
touching the open group the call belongs to. Its answer says what that will really do: how
many tokens of which region will be summarized, or that nothing is due and why
(:mod:`regio.compaction._compactplan`).

A write into a ``grows`` region travels in the conversation as a note until the layout settles
it; the layout places that note itself, so the tool result only
confirms the write (``ContextToolOutcome.note`` carries the note text for loops that want it).
"""

from __future__ import annotations

from typing import Any

import msgspec

from regio.compaction._compactor import run_steps
from regio.compaction._compactplan import compact_plan, describe_plan
from regio.compaction._flush import schedule_compaction
from regio.compaction._writes import release_from, write_steps
from regio.compaction.relief._originals import restore
from regio.content import ContentTypeError
from regio.errors import RegioError
from regio.layout import note_text
from regio.regions import Checklist, Refusal, WriteResult
from regio.session._events import ToolCallHandled
from regio.session._options import TOOL_NAMES
from regio.session._session import Session, Steps
from regio.session._textadmit import admit_value
from regio.session._toolargs import ToolArgumentError, check_arguments, echo, parse_arguments
from regio.session._toolspecs import (
    checklist_regions,
    context_tool_specs,
    offered_tool_specs,
    writable_regions,
)

__all__ = [
    "TOOL_NAMES",
    "ContextToolOutcome",
    "context_tool_specs",
    "handle_tool_call",
    "offered_tool_specs",
    "tool_steps",
]


class ContextToolOutcome(msgspec.Struct, frozen=True):
    """Result of one context tool call: ``text`` for the agent, ``ok`` false for a mistake or
    refusal, ``data`` structured details, ``note`` the note text of a grows-region write."""

    text: str
    ok: bool = True
    data: dict[str, Any] = msgspec.field(default_factory=dict)
    note: str | None = None


def _listing(c: Session) -> str:
    writable = set(writable_regions(c.window))
    lines = [f"window: {c.window.used_tokens}/{c.window.max_tokens} tokens used"]
    for r in c.window.regions:
        access = (
            "writable"
            if r.name in writable
            else ("todo tools" if isinstance(r, Checklist) else "read-only")
        )
        lines.append(
            f"- {r.name} ({r.kind}, {access}): {r.used_tokens}/{r.budget} tokens, "
            f"{len(r.entries)} entries"
        )
    return "\n".join(lines)


def _echo_chars(c: Session) -> int:
    return c.options.tool_limits.echo_chars


def _q(c: Session, value: object) -> str:
    """``value`` (agent input) quoted, bounded."""
    return echo(value, _echo_chars(c))


def _mistake(c: Session, name: str, message: str) -> ContextToolOutcome:
    limit = _echo_chars(c)
    tool = name if isinstance(name, str) and len(name) <= limit else echo(name, limit)
    if len(message) > 8 * limit + 400:  # a backstop: every agent value in it is already cut
        message = message[: 8 * limit + 400] + f"... ({len(message)} characters)"
    text = f"{tool}: {message}\n{_listing(c)}"
    c.emit(ToolCallHandled(tool, False, message))
    return ContextToolOutcome(text, ok=False)


def _ok(c: Session, name: str, text: str, **data: Any) -> ContextToolOutcome:
    c.emit(ToolCallHandled(name, True, text.splitlines()[0] if text else ""))
    return ContextToolOutcome(text, ok=True, data=data)


def _write(c: Session, name: str, args: dict[str, Any]) -> Steps[ContextToolOutcome]:
    region, text = args.get("region"), args.get("text")
    if not isinstance(region, str) or not isinstance(text, str) or not text.strip():
        return _mistake(c, name, "needs 'region' (a writable region) and a non-empty 'text'")
    writable = writable_regions(c.window)
    if region not in writable:
        return _mistake(
            c,
            name,
            f"region {_q(c, region)} is not writable; writable regions: "
            f"{', '.join(writable) or 'none'}",
        )
    key = args.get("key") if name == "context_write" else None
    if key is not None and not isinstance(key, str):
        return _mistake(c, name, "'key' must be a string")
    result = yield from write_steps(c, region, text, key=key)
    if isinstance(result, Refusal):
        return _mistake(c, name, result.message)
    assert isinstance(result, WriteResult)
    r = c.window.region(region)
    where = f"{r.used_tokens}/{r.budget} tokens used in {region!r}"
    if result.unchanged:
        return _ok(c, name, f"unchanged: {region!r} already holds this value ({where})")
    verb = "replaced" if result.replaced else "written"
    extra = f"; rolled off {len(result.evicted)} older entries" if result.evicted else ""
    outcome = _ok(
        c,
        name,
        f"{verb} {result.entry_id} ({where}{extra})",
        entry_id=result.entry_id,
        evicted=list(result.evicted),
    )
    if r.volatility == "grows" and not r.replacing_writer:  # else laid out in the tail
        entry = next(e for e in r.entries if e.id == result.entry_id)
        return msgspec.structs.replace(outcome, note=note_text(region, entry))
    return outcome


def _read(c: Session, args: dict[str, Any]) -> ContextToolOutcome:
    region = args.get("region")
    if not isinstance(region, str) or region not in [r.name for r in c.window.regions]:
        return _mistake(c, "context_read", f"unknown region {_q(c, region)}")
    r = c.window.region(region)
    key = args.get("key")
    if key is not None:
        found = [e for e in r.entries if e.key == key]
        if not found:
            keys = [e.key for e in r.entries if e.key]
            return _mistake(
                c,
                "context_read",
                f"region {region!r} has no key {_q(c, key)}; keys: {', '.join(keys) or 'none'}",
            )
        return _ok(c, "context_read", found[-1].text)
    body = "\n".join(
        f"[{i}] " + (f"{e.key}: " if e.key else "") + e.text for i, e in enumerate(r.entries)
    )
    return _ok(
        c,
        "context_read",
        f"{region} ({r.used_tokens}/{r.budget} tokens):\n" + (body or "(empty)"),
    )


def _delete(c: Session, args: dict[str, Any]) -> ContextToolOutcome:
    region = args.get("region")
    if not isinstance(region, str) or region not in [r.name for r in c.window.regions]:
        return _mistake(c, "context_delete", f"unknown region {_q(c, region)}")
    chosen = {k: args[k] for k in ("key", "index", "oldest") if args.get(k) is not None}
    if len(chosen) != 1:
        return _mistake(c, "context_delete", "give exactly one of 'key', 'index' or 'oldest'")
    r = c.window.region(region)
    if not r.agent_releasable:
        return _mistake(
            c,
            "context_delete",
            f"region {region!r} ({r.kind}) cannot be released by the agent",
        )
    removed = release_from(c, region, **chosen)  # a RegioError becomes a reply (the caller)
    freed = sum(e.tokens for e in removed)
    return _ok(
        c,
        "context_delete",
        f"released {len(removed)} entries ({freed} tokens); "
        f"{r.used_tokens}/{r.budget} tokens used in {region!r}",
        released=[e.id for e in removed],
    )


def _todo(c: Session, name: str, args: dict[str, Any]) -> ContextToolOutcome:
    lists = checklist_regions(c.window)
    region = args.get("region") or (lists[0] if lists else None)
    if region not in lists:
        return _mistake(
            c,
            name,
            f"no checklist region {_q(c, region)}; checklists: {', '.join(lists) or 'none'}",
        )
    if name == "todo_add":
        result = c.window.todo_add(region, str(args.get("text", "")))
    elif name == "todo_done":
        result = c.window.todo_done(region, str(args.get("item_id", "")))
    else:
        note = str(args.get("note", "")).strip()
        if not note:
            return _mistake(c, name, "needs a non-empty 'note'")
        result = c.window.todo_note(region, str(args.get("item_id", "")), note)
    if isinstance(result, Refusal):
        return _mistake(c, name, result.message)
    r = c.window.region(region)
    entry = next((e for e in r.entries if e.id == result.entry_id), None)
    if entry is not None and not result.unchanged:
        c.record("write", region, entry=entry)
    item = entry.key if entry is not None else "?"
    return _ok(
        c,
        name,
        f"{name.split('_')[1]}: item {item} in {region!r}\n" + r.render_text(),
        item_id=item,
    )


def handle_tool_call(c: Session, name: str, arguments: object) -> ContextToolOutcome:
    """:func:`tool_steps` driven synchronously (:meth:`Session.run`)."""
    return run_steps(c, tool_steps(c, name, arguments))


def tool_steps(c: Session, name: str, arguments: object) -> Steps[ContextToolOutcome]:
    """Run context tool ``name`` with ``arguments`` (a dict or JSON text); never raises for the
    agent's mistakes (module doc): a bad name or argument, or a :class:`RegioError` the call
    provokes, comes back as a :class:`ContextToolOutcome` with ``ok`` false. A step generator:
    a write that makes room by compaction yields its summarizer jobs to the caller's driver."""
    if not isinstance(name, str) or name not in TOOL_NAMES:
        return _mistake(
            c, str(name), f"unknown tool {_q(c, name)}; context tools: {', '.join(TOOL_NAMES)}"
        )
    try:
        args = parse_arguments(arguments, c.options.tool_limits)
    except ToolArgumentError as exc:
        return _mistake(c, name, f"{exc}; call {name} again with a JSON object")
    try:
        args = admit_value(c.emit, args, f"handle_tool_call({name})", "arguments")
    except ContentTypeError as exc:
        return _mistake(c, name, f"{exc}; call {name} again with JSON values")
    offered = offered_tool_specs(c.window, c.options.context_tools, c.options.relief)
    spec = next((s for s in offered if s.name == name), None)
    if spec is None:
        names = ", ".join(s.name for s in offered) or "none"
        return _mistake(
            c,
            name,
            f"context tool {name!r} is not offered to this agent (offered: {names}); "
            "set EngineOptions.context_tools or the blueprint's tools.context to offer it",
        )
    if spec is not None:
        problem = check_arguments(name, spec.input_schema, args, _echo_chars(c))
        if problem is not None:
            return _mistake(c, name, problem)
    try:
        return (yield from _dispatch(c, name, args))
    except RegioError as exc:  # the call's own refusal (keyed without a key, unknown key, ...)
        return _mistake(c, name, _cut_echoes(c, str(exc), args))


def _cut_echoes(c: Session, message: str, args: dict[str, Any]) -> str:
    """``message`` with every long agent string of ``args`` it quotes cut to the echo bound."""
    limit = _echo_chars(c)
    for value in args.values():
        if isinstance(value, str) and len(value) > limit and value in message:
            message = message.replace(value, f"{value[:limit]}... ({len(value)} characters)")
    return message


def _dispatch(c: Session, name: str, args: dict[str, Any]) -> Steps[ContextToolOutcome]:
    if name in ("context_write", "context_append"):
        return (yield from _write(c, name, args))
    if name == "context_read":
        return _read(c, args)
    if name == "context_delete":
        return _delete(c, args)
    if name == "context_list":
        return _ok(c, name, _listing(c))
    if name in ("todo_add", "todo_done", "todo_note"):
        return _todo(c, name, args)
    if name == "context_restore":
        text, ok = restore(c, str(args["call_id"]))
        if not ok:
            return _mistake(c, name, _cut_echoes(c, text, args))
        return _ok(c, name, text, call_id=args["call_id"])
    if name == "compact":
        instructions = args.get("instructions")
        plan = compact_plan(c)
        schedule_compaction(c, instructions if isinstance(instructions, str) else None)
        return _ok(c, name, describe_plan(plan))
    return _mistake(c, name, f"tool {name!r} is not offered by this window")
