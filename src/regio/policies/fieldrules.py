"""Declared field rules of a policy Struct: one ``msgspec.Meta`` per field, checked in Python.

A policy field (:class:`regio.policies.relief.ReliefPolicy`, ``ToolRelief``) is declared as
``Annotated[type, field_key(doc, ge=..., min_length=...)]``: its constraint and the
documentation of its blueprint key in one place. msgspec checks ``Meta`` constraints only when
decoding, so :func:`check_fields` (called from a Struct's ``__post_init__``) validates a policy
built in Python the same way, and :func:`field_problem` phrases one bad value as an error that
names the field and the fix. :func:`field_rules` is what the blueprint's key reference reads.
"""

from __future__ import annotations

import types
import typing
from typing import Any, TypeVar

import msgspec

__all__ = ["check_fields", "declare_rules", "field_key", "field_problem", "field_rules"]

T = TypeVar("T")

#: Class -> its field rules, for the classes declared with :func:`declare_rules` (read once at
#: definition: class objects of the package, not per-session state).
_RULES: dict[type, dict[str, tuple[msgspec.Meta, Any]]] = {}


def field_key(doc: str, **rule: Any) -> Any:
    """A policy field's ``msgspec.Meta``: its constraint (``ge``, ``min_length``) and the
    documentation of its blueprint key (``description``); the one declaration of both, read by
    :func:`check_fields` and by :mod:`regio.blueprint.reliefspec` for the blueprint."""
    return msgspec.Meta(description=doc, **rule)


def _rules(cls: type) -> dict[str, tuple[msgspec.Meta, Any]]:
    """Field name -> its ``msgspec.Meta`` (of the type or of the type inside ``X | None``) and
    the field's whole annotated type (what :func:`field_problem` validates with msgspec)."""
    out: dict[str, tuple[msgspec.Meta, Any]] = {}
    for name, full in typing.get_type_hints(cls, include_extras=True).items():
        hint = full
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
            hint = inner[0] if len(inner) == 1 else hint
        metas = [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, msgspec.Meta)]
        if metas:
            out[name] = (metas[0], full)
    return out


def declare_rules(cls: type[T]) -> type[T]:
    """Read the field rules of ``cls`` once, at its definition (a class decorator); a class
    not declared is read on every check."""
    _RULES[cls] = _rules(cls)
    return cls


def _declared(cls: type) -> dict[str, tuple[msgspec.Meta, Any]]:
    return _RULES[cls] if cls in _RULES else _rules(cls)


def field_rules(cls: type) -> dict[str, msgspec.Meta]:
    """The declared ``msgspec.Meta`` of each field of ``cls`` (e.g.
    :class:`regio.policies.relief.ReliefPolicy`: constraint and key documentation), in
    declaration order."""
    return {name: meta for name, (meta, _) in _declared(cls).items()}


def field_problem(cls: type, name: str, value: object, where: str = "") -> str | None:
    """Why ``value`` cannot be field ``name`` of the class ``cls`` (``None``: it can),
    naming ``where`` + the field and the fix. The value is validated by msgspec against the
    field's declared type, so every ``msgspec.Meta`` constraint holds (``ge``, ``gt``, ``le``,
    ``lt``, ``multiple_of``, ``min_length``, ``max_length``, ``pattern``), and the type too.
    ``None`` (an omitted option) meets every constraint."""
    declared = _declared(cls).get(name)
    if declared is None or value is None:
        return None
    meta, hint = declared
    try:
        msgspec.convert(value, type=hint)
    except msgspec.ValidationError as exc:
        return _phrase(f"{where}{name}", meta, value, str(exc))
    return None


def _phrase(field: str, meta: msgspec.Meta, value: object, detail: str) -> str:
    """The error of ``field`` for a ``value`` msgspec refused with ``detail``."""
    if (
        meta.ge is not None
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
        and value < meta.ge
    ):
        return f"{field} must be >= {meta.ge}, got {value}; raise it"
    if meta.min_length is not None and hasattr(value, "__len__") and len(value) < meta.min_length:
        if meta.min_length == 1:
            return f"{field} must not be empty; name it or remove it"
        return f"{field} needs at least {meta.min_length} items or characters, got {len(value)}"
    return f"{field} is {value!r}: {detail[0].lower()}{detail[1:]}; change it to match"


def check_fields(value: object, where: str) -> None:
    """Raise ``ValueError`` naming ``where`` + the field when a field of ``value`` breaks its
    declared type or constraint (msgspec checks ``Meta`` only when decoding; a policy built
    in Python is validated here by msgspec, :func:`field_problem`)."""
    for name in _declared(type(value)):
        problem = field_problem(type(value), name, getattr(value, name), where)
        if problem is not None:
            raise ValueError(problem)
