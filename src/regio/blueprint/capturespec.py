"""The ``capture`` option of a region: declarative rules for content the engine or a trace
replay copies into the region (instead of leaving it in the system prompt or the conversation).

An agent's loop produces state in places where it hurts the prefix cache: a clock line in the
system prompt, an environment footer at the end of every observation, lookup results buried in
tool results, a 5,000-token file dump in the conversation. A region's ``capture`` list says
which of that content belongs to the region. Four rules (``rule:``):

* ``system_prompt`` — the agent's system prompt is written to this region (replacing its
  seed). With ``pattern``, only the text the regex matches is (and it is cut out of the
  prompt the pattern-less ``system_prompt`` region receives): tau-bench's
  ``The current time is ...`` line goes to a small ``rewritten`` clock region.
* ``footer`` — ``pattern`` (a regex, usually anchored with ``\\Z``) is searched in every
  observation and tool result; the match (its named group ``state`` when there is one) is
  written to the region when it changed, and with ``strip`` (default true) removed from the
  text kept in the conversation. SWE-agent's ``(Open file: X)`` / ``(Current directory: Y)``.
* ``lookup`` — the result of a call to one of ``tools`` is written to the region (a keyed
  region: under ``key``, a template of the call's arguments such as ``"user:{user_id}"``;
  ``{tool}`` is the tool's name) and also kept as the tool result.
* ``park`` — a tool result of at least ``min_tokens`` tokens (default 1,500) is moved to the
  region (the newest ``keep`` parked outputs stay, default 1); the conversation keeps a stub
  (its first line and where the rest went).

Which key applies to which rule is checked across keys by :func:`check_captures` (errors name
the YAML path and line, e.g. ``regions[2].capture[0].tools``). :mod:`regio.capture` executes
the rules (the bench's replay and ``regio proxy``).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
from typing import Annotated, Literal, get_args

import attrs

from regio.blueprint.fields import FieldRule, Int1, NonEmpty, _field

__all__ = [
    "CAPTURE_KEYS",
    "CAPTURE_RULES",
    "CaptureRule",
    "CaptureSpec",
    "check_captures",
    "key_fields",
    "required_keys",
]

CaptureRule = Literal["system_prompt", "footer", "lookup", "park"]
#: FieldRule names, in documentation order (the words of :data:`CaptureRule`).
CAPTURE_RULES: tuple[str, ...] = get_args(CaptureRule)
#: Which optional keys each rule takes (``rule`` itself is always allowed).
CAPTURE_KEYS: dict[str, tuple[str, ...]] = {
    "system_prompt": ("pattern",),
    "footer": ("pattern", "strip", "key"),
    "lookup": ("tools", "key"),
    "park": ("min_tokens", "keep"),
}
#: Keys a rule cannot do without.
_REQUIRED: dict[str, tuple[str, ...]] = {"footer": ("pattern",), "lookup": ("tools",)}
#: Optional keys of :class:`CaptureSpec` (all default to ``None``).
_OPTIONAL = ("pattern", "tools", "key", "strip", "min_tokens", "keep")


Pattern = Annotated[
    str, FieldRule(min_length=1, describe="a regular expression (Python re syntax)")
]


@attrs.frozen(kw_only=True)
class CaptureSpec:
    """One capture rule: content the engine or replay copies into the region."""

    rule: CaptureRule = _field(
        "`system_prompt` (the agent's system prompt, or the part `pattern` matches), "
        "`footer` (a state footer found by `pattern` in observations and tool results), "
        "`lookup` (results of the calls to `tools`) or `park` (tool results of at least "
        "`min_tokens`)."
    )
    pattern: Pattern | None = _field(
        "`system_prompt`, `footer`: a Python regular expression. `footer` writes the match "
        "(its named group `state` if it has one); `system_prompt` takes the match out of the "
        "prompt into this region.",
        default=None,
    )
    tools: tuple[NonEmpty, ...] | None = _field(
        "`lookup`: names of the tools whose results are copied here.", default=None
    )
    key: NonEmpty | None = _field(
        "`footer`, `lookup`: key of the written entry in a keyed region (required there, not "
        'allowed elsewhere). For `lookup` a template of the call\'s arguments: `"user:{user_id}"`; '
        "`{tool}` is the tool's name.",
        default=None,
    )
    strip: bool | None = _field(
        "`footer`: remove the footer from the text kept in the conversation. Omitted: true.",
        default=None,
    )
    min_tokens: Int1 | None = _field(
        "`park`: smallest tool result (tokens) that is parked. Omitted: 1500.", default=None
    )
    keep: Int1 | None = _field(
        "`park`: how many parked outputs the region keeps (newest first; one whose result a "
        "compaction summarized or relief cleared leaves with it). Omitted: 1.",
        default=None,
    )


def required_keys(rule: str) -> tuple[str, ...]:
    """Keys a capture ``rule`` cannot do without (``footer``: pattern, ``lookup``: tools)."""
    return _REQUIRED.get(rule, ())


def key_fields(template: str) -> list[str]:
    """Field names of a ``key`` template (``"flight:{flight_number}:{date}"`` ->
    ``["flight_number", "date"]``); raises ``ValueError`` for a malformed template (unbalanced
    braces, positional ``{}`` or ``{0}`` fields)."""
    names: list[str] = []
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if not name or name.isdigit() or spec or conversion:
            raise ValueError(
                f"{{{name}}} is not a named argument; write fields like {{user_id}} (no format "
                "specs, no positions)"
            )
        names.append(name)
    return names


Report = Callable[[tuple["str | int", ...], str], None]


def check_captures(
    regions: Sequence[object], error: Report, *, keyed_kinds: Sequence[str] = ("keyed",)
) -> None:
    """Check the ``capture`` lists of ``regions`` (region specs with ``name``, ``kind`` and
    ``capture``), calling ``error(path, message)`` for each problem:

    * a key that the rule does not take, or a required key that is missing;
    * a ``pattern`` that is not a valid regular expression (the ``re`` error is quoted);
    * ``key`` missing in a keyed region or given in another kind; a malformed ``key`` template;
    * a capture on a ``sliding_window`` (the conversation is where captured content comes
      from) or a ``park`` into a region that is not ``temporary`` / ``clearable``;
    * more than one region taking the whole system prompt (``system_prompt`` without
      ``pattern``).
    """
    whole: tuple[str | int, ...] | None = None
    for index, spec in enumerate(regions):
        captures: Sequence[CaptureSpec] = getattr(spec, "capture", ())
        kind = getattr(spec, "kind", "")
        name = getattr(spec, "name", "")
        for j, cap in enumerate(captures):
            path: tuple[str | int, ...] = ("regions", index, "capture", j)
            if kind == "sliding_window":
                error(
                    (*path, "rule"),
                    f"region {name!r} is the conversation, where captured content comes from; "
                    "capture into another region",
                )
                continue
            allowed = CAPTURE_KEYS[cap.rule]
            for key in _OPTIONAL:
                if getattr(cap, key) is not None and key not in allowed:
                    keys = ", ".join(allowed) or "no other key"
                    error(
                        (*path, key),
                        f"{key!r} does not apply to a {cap.rule} rule; it takes {keys}",
                    )
            for key in _REQUIRED.get(cap.rule, ()):
                if getattr(cap, key) is None:
                    error(path, f"a {cap.rule} rule needs {key!r} ({_NEEDS[key]})")
            if cap.pattern is not None:
                try:
                    re.compile(cap.pattern)
                except re.error as exc:
                    error((*path, "pattern"), f"not a valid regular expression: {exc}")
            if cap.rule in ("footer", "lookup"):
                _check_key(cap, kind, name, path, error, keyed_kinds)
            if cap.rule == "park" and kind not in ("temporary", "clearable"):
                error(
                    (*path, "rule"),
                    f"park moves raw tool output into a region that can drop it; region "
                    f"{name!r} is {kind}: use a temporary or clearable region",
                )
            if cap.rule == "system_prompt" and cap.pattern is None:
                if whole is not None:
                    error(
                        (*path, "rule"),
                        f"the whole system prompt already goes to {_show(whole)}; one region "
                        "takes it, others take parts of it with `pattern`",
                    )
                else:
                    whole = path


_NEEDS = {
    "pattern": "the regular expression that finds the footer",
    "tools": "the names of the lookup tools, e.g. [get_user_details]",
}


def _show(path: tuple[str | int, ...]) -> str:
    return f"regions[{path[1]}]"


def _check_key(
    cap: CaptureSpec,
    kind: str,
    name: str,
    path: tuple[str | int, ...],
    error: Report,
    keyed_kinds: Sequence[str],
) -> None:
    if kind in keyed_kinds and cap.key is None:
        example = '"user:{user_id}"' if cap.rule == "lookup" else "environment"
        error(path, f"region {name!r} is keyed: give the rule a key (e.g. key: {example})")
    elif kind not in keyed_kinds and cap.key is not None:
        error(
            (*path, "key"),
            f"key applies only to keyed regions; region {name!r} is {kind}: remove it",
        )
    if cap.key is not None and cap.rule == "lookup":
        try:
            key_fields(cap.key)
        except ValueError as exc:
            error((*path, "key"), f"bad key template {cap.key!r}: {exc}")
