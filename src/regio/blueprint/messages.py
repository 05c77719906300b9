"""Blueprint issues from cattrs' detailed-validation errors: the YAML path, its line, what was
found, what is allowed, and a "did you mean" suggestion.

cattrs raises one exception tree per document (``ClassValidationError`` and
``IterableValidationError`` groups whose members carry ``AttributeValidationNote`` /
``IterableValidationNote`` notes). :func:`structure_issues` walks it to its leaves, builds each
leaf's path from the notes and phrases it:

* ``ForbiddenExtraKeysError`` -> one "unknown key" issue per key, suggesting the closest key
  (:func:`difflib.get_close_matches`) or naming the region kind that owns it;
* ``KeyError`` for an attribute -> "missing required key", at the mapping;
* :class:`~regio.blueprint.convert.ValueProblem` -> ``got X; expected Y``, with a suggestion
  among its choices.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)

from regio.blueprint.convert import ValueProblem
from regio.blueprint.errors import BlueprintIssue, suggest
from regio.blueprint.source import Located, Path, format_path
from regio.blueprint.spec import REGION_CLASSES, Blueprint, RegionSpec, yaml_fields

__all__ = ["show", "structure_issues"]


def show(value: object) -> str:
    """A found value as an error message quotes it (``null``, ``true``, ``a mapping``, ``'x'``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _leaves(
    exc: BaseException, path: Path, owner: type
) -> Iterator[tuple[Path, BaseException, type]]:
    """``(path, leaf exception, class being structured)`` for every problem in the tree."""
    if isinstance(exc, (ClassValidationError, IterableValidationError)):
        inner = exc.cl if isinstance(exc, ClassValidationError) else owner
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            if isinstance(note, AttributeValidationNote):
                yield from _leaves(sub, (*path, note.name), inner)
            elif isinstance(note, IterableValidationNote):
                yield from _leaves(sub, (*path, note.index), inner)
        for sub in without:
            yield from _leaves(sub, path, inner)
    else:
        yield path, exc, owner


def _what(owner: type, path: Path) -> str:
    if isinstance(owner, type) and issubclass(owner, RegionSpec):
        return f"a {owner.kind} region"
    if owner is Blueprint:
        return "the blueprint"
    return format_path(path)


def _allowed(owner: type) -> list[str]:
    names = [f.name for f in yaml_fields(owner)] if attrs.has(owner) else []
    return ["kind", *names] if isinstance(owner, type) and issubclass(owner, RegionSpec) else names


def _unknown_key(owner: type, path: Path, key: object) -> str:
    allowed = _allowed(owner)
    what = _what(owner, path)
    if not isinstance(key, str):
        return f"key {show(key)} is not a string; keys are {', '.join(allowed)}"
    if isinstance(owner, type) and issubclass(owner, RegionSpec):
        for other in REGION_CLASSES.values():
            if key in {f.name for f in yaml_fields(other)}:
                return (
                    f"{key!r} is an option of {other.kind} regions, not of {what}; "
                    f"allowed keys: {', '.join(allowed)}"
                )
    return (
        f"unknown key {key!r} in {what}.{suggest(key, allowed)} Allowed keys: {', '.join(allowed)}"
    )


def _missing(owner: type, name: str, path: Path) -> str:
    doc = attrs.fields_dict(owner)[name].metadata.get("doc", "")
    return f"missing required key {name!r} in {_what(owner, path)} ({doc})"


def _value(exc: ValueProblem, path: Path) -> str:
    if path == ():
        required = [f.name for f in yaml_fields(Blueprint) if f.default is attrs.NOTHING]
        return (
            f"got {show(exc.value)}; a blueprint is a mapping with at least the keys "
            f"{', '.join(required)}"
        )
    hint = suggest(exc.value, exc.choices) if isinstance(exc.value, str) and exc.choices else ""
    return f"got {show(exc.value)}; expected {exc.expected}.{hint}".rstrip(".")


def structure_issues(error: BaseException, located: Located) -> list[BlueprintIssue]:
    """Every problem in a cattrs structuring error (or a :class:`ValueProblem`) of the document
    ``located``, as issues naming the YAML path and line."""
    issues: list[BlueprintIssue] = []

    def add(path: Path, message: str) -> None:
        issues.append(BlueprintIssue(format_path(path), located.line(path), message))

    for path, leaf, owner in _leaves(error, (), Blueprint):
        if isinstance(leaf, ForbiddenExtraKeysError):
            cls = leaf.cl if leaf.cl is not None else owner
            for key in sorted(leaf.extra_fields, key=str):
                add((*path, key), _unknown_key(cls, path, key))
        elif isinstance(leaf, ValueProblem):
            add((*path, *leaf.at), _value(leaf, path))
        elif isinstance(leaf, KeyError) and path and attrs.has(owner):
            add(path[:-1], _missing(owner, str(path[-1]), path[:-1]))
        else:  # not raised by the hooks; kept visible rather than swallowed
            add(path, f"cannot read this value ({type(leaf).__name__}: {leaf})")
    return issues
