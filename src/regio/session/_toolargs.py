"""Validation of context-tool arguments against the tool's JSON schema (agent
mistakes come back as instructive text, never as exceptions).

Supported schema subset (what :func:`regio.engine._tools.context_tool_specs` uses): an object
with ``properties`` of type ``string`` or ``integer`` (optionally ``minimum``), a ``required``
list, and no other keys allowed (``additionalProperties: false`` is implied). ``enum`` s are
listed in the usage text but checked by the tool itself, whose message also says why (a region
that exists but is not writable, say).

The arguments come from the model, so they are untrusted and bounded by :class:`ToolLimits`
(``EngineOptions.tool_limits``):

=====================  =======  ==============================================================
limit                  default  when exceeded
=====================  =======  ==============================================================
``echo_chars``         200      an agent-supplied value quoted in a reply is cut to this many
                                characters and marked with its full length
``max_depth``          32       arguments nested deeper (objects / arrays) are refused as text
``max_int_digits``     64       a longer integer is refused as text (CPython itself refuses to
                                convert more than 4,300 digits)
``max_argument_chars`` 1 MiB    JSON argument text longer than this is refused before parsing
=====================  =======  ==============================================================
"""

from __future__ import annotations

import json
import reprlib
from typing import Any

import msgspec

__all__ = [
    "DEFAULT_TOOL_LIMITS",
    "ToolArgumentError",
    "ToolLimits",
    "check_arguments",
    "echo",
    "parse_arguments",
]


class ToolLimits(msgspec.Struct, frozen=True):
    """Bounds on what the agent sends to the context tools (defaults in the module doc):
    ``echo_chars`` characters, ``max_depth`` nesting levels, ``max_int_digits`` digits,
    ``max_argument_chars`` characters of JSON text. Raises :class:`ValueError` for a limit < 1."""

    echo_chars: int = 200
    max_depth: int = 32
    max_int_digits: int = 64
    max_argument_chars: int = 2**20

    def __post_init__(self) -> None:
        for name in ("echo_chars", "max_depth", "max_int_digits", "max_argument_chars"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"ToolLimits.{name} must be an integer >= 1, got {value!r}")


#: The limits of an engine whose options name none.
DEFAULT_TOOL_LIMITS = ToolLimits()


class ToolArgumentError(ValueError):
    """Arguments that cannot be taken (not a JSON object, too deep, too long, a huge integer);
    the message is the instructive text the agent gets back."""


def _digits_over(value: int, limit: int) -> bool:
    # bit_length * log10(2) estimates the digit count without converting (no 4,300 limit)
    return value.bit_length() * 0.30103 > limit + 1


def echo(value: object, limit: int = DEFAULT_TOOL_LIMITS.echo_chars) -> str:
    """``repr(value)`` of at most about ``limit`` characters: a longer string is cut and marked
    with its length, a huge integer is described by its digit count, containers are shortened
    (:mod:`reprlib`); never raises."""
    if isinstance(value, int) and not isinstance(value, bool) and _digits_over(value, limit):
        return f"<an integer of about {int(value.bit_length() * 0.30103) + 1} digits>"
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit]) + f"... ({len(value)} characters)"
    short = reprlib.Repr()
    short.maxstring = short.maxother = short.maxlong = max(limit, 8)
    short.maxlevel = 3
    try:
        text = short.repr(value)
    except Exception:  # a hostile __repr__ or an unconvertible nested integer
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit + 20 else text[:limit] + f"... ({len(text)} characters)"


def _too_deep(value: object, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` dicts / lists (iterative: never recurses)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            if depth + 1 > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _int_parser(limit: int) -> Any:
    def parse_int(text: str) -> int:
        digits = len(text) - (text[:1] == "-")
        if digits > limit:
            raise ToolArgumentError(f"an integer of {digits} digits (the limit is {limit})")
        return int(text)

    return parse_int


def parse_arguments(arguments: Any, limits: ToolLimits = DEFAULT_TOOL_LIMITS) -> dict[str, Any]:
    """The arguments of a tool call (a dict, JSON text or ``None``) as a dict, within
    ``limits``. Raises :class:`ToolArgumentError` (never ``RecursionError`` or a builtin
    ``ValueError``) with the text for the agent."""
    if arguments is None:
        return {}
    if isinstance(arguments, str | bytes):
        if len(arguments) > limits.max_argument_chars:
            raise ToolArgumentError(
                f"the arguments are {len(arguments)} characters long (the limit is "
                f"{limits.max_argument_chars}); send less text per call"
            )
        try:
            value = json.loads(arguments or "{}", parse_int=_int_parser(limits.max_int_digits))
        except RecursionError:
            raise ToolArgumentError(
                f"the arguments nest deeper than {limits.max_depth} levels"
            ) from None
        except ToolArgumentError:
            raise
        except ValueError as exc:
            raise ToolArgumentError(f"the arguments are not valid JSON ({exc})") from None
    else:
        try:
            value = dict(arguments)
        except (TypeError, ValueError):
            raise ToolArgumentError(
                f"the arguments must be a JSON object, got {type(arguments).__name__}"
            ) from None
    if not isinstance(value, dict):
        raise ToolArgumentError(f"the arguments must be a JSON object, got {type(value).__name__}")
    if _too_deep(value, limits.max_depth):
        raise ToolArgumentError(f"the arguments nest deeper than {limits.max_depth} levels")
    for key, item in value.items():
        if isinstance(item, int) and _digits_over(item, limits.max_int_digits):
            raise ToolArgumentError(
                f"argument {echo(key, limits.echo_chars)} is an integer of more than "
                f"{limits.max_int_digits} digits"
            )
    return value


_TYPES = {"string": "a string", "integer": "an integer"}


def _ok_type(kind: str | None, value: object) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return True


def _describe(name: str, prop: dict[str, Any]) -> str:  # name: a schema key, not agent input
    kind = prop.get("type")
    text = f"'{name}' ({_TYPES.get(str(kind), str(kind))}"
    if "minimum" in prop:
        text += f" >= {prop['minimum']}"
    if prop.get("enum"):
        text += ", one of " + ", ".join(repr(v) for v in prop["enum"])
    desc = prop.get("description")
    return text + (f": {desc}" if desc else "") + ")"


def check_arguments(
    tool: str, schema: dict[str, Any], args: dict[str, Any], echo_chars: int = 200
) -> str | None:
    """``None`` when ``args`` satisfy ``schema``, else one instructive sentence naming the first
    wrong argument and the fix (unknown keys first, then missing required keys, then types and
    minimums, in schema order). Agent values are quoted with :func:`echo` (``echo_chars``)."""
    props: dict[str, Any] = schema.get("properties", {})
    usage = ", ".join(_describe(n, p) for n, p in props.items()) or "no arguments"
    unknown = [k for k in args if k not in props]
    if unknown:
        bad = echo(unknown[0], echo_chars)
        return f"unknown argument {bad}; {tool} takes {usage}. Remove {bad} and call again"
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
            wanted = _TYPES.get(str(prop.get("type")), prop.get("type"))
            return (
                f"argument {name!r} must be {wanted}, got {type(value).__name__} "
                f"{echo(value, echo_chars)}; pass {_describe(name, prop)}"
            )
        if "minimum" in prop and value < prop["minimum"]:
            return f"argument {name!r} must be >= {prop['minimum']}, got {echo(value, echo_chars)}"
    return None
