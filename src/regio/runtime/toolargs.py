"""Validation of context-tool arguments against the tool's JSON schema (agent
mistakes come back as instructive text, never as exceptions).

Supported schema subset (what :func:`regio.runtime.tools.context_tool_specs` uses): an object
with ``properties`` of type ``string`` or ``integer`` (optionally ``minimum``), a ``required``
list, and no other keys allowed (``additionalProperties: false`` is implied). ``enum`` s are
listed in the usage text but checked by the tool itself, whose message also says why (a region
that exists but is not writable, say).
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_arguments"]

_TYPES = {"string": "a string", "integer": "an integer"}


def _ok_type(kind: str | None, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return True


def _describe(name: str, prop: dict[str, Any]) -> str:
    kind = prop.get("type")
    text = f"'{name}' ({_TYPES.get(str(kind), str(kind))}"
    if "minimum" in prop:
        text += f" >= {prop['minimum']}"
    if prop.get("enum"):
        text += ", one of " + ", ".join(repr(v) for v in prop["enum"])
    desc = prop.get("description")
    return text + (f": {desc}" if desc else "") + ")"


def check_arguments(tool: str, schema: dict[str, Any], args: dict[str, Any]) -> str | None:
    """``None`` when ``args`` satisfy ``schema``, else one instructive sentence naming the first
    wrong argument and the fix (unknown keys first, then missing required keys, then types and
    minimums, in schema order)."""
    props: dict[str, Any] = schema.get("properties", {})
    usage = ", ".join(_describe(n, p) for n, p in props.items()) or "no arguments"
    unknown = [k for k in args if k not in props]
    if unknown:
        return (
            f"unknown argument {unknown[0]!r}; {tool} takes {usage}. Remove {unknown[0]!r} "
            "and call again"
        )
    for name in schema.get("required", []):
        if name not in args or args[name] is None:
            return (
                f"missing required argument {_describe(name, props.get(name, {}))}; "
                f"{tool} takes {usage}"
            )
    for name, prop in props.items():
        if name not in args or args[name] is None:
            continue
        value = args[name]
        if not _ok_type(prop.get("type"), value):
            return (
                f"argument {name!r} must be {_TYPES.get(str(prop.get('type')), prop.get('type'))}, "
                f"got {type(value).__name__} {value!r}; pass {_describe(name, prop)}"
            )
        if "minimum" in prop and value < prop["minimum"]:
            return f"argument {name!r} must be >= {prop['minimum']}, got {value!r}"
    return None
