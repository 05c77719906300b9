"""The cattrs converter between YAML data and the blueprint spec classes, both ways.

Structuring uses cattrs' detailed validation, so one pass collects *every* problem of a
document, each with its path (``regions[3].budget``) in the exception notes, and
``forbid_extra_keys`` reports unknown keys. On top of cattrs' defaults the hooks here are:

* strict scalars: ``int`` takes an integer (or an integral float such as ``4096.0``, as JSON
  Schema does; not ``true``, ``"5"`` or ``1.5``), ``float`` an integer or float, ``str`` a
  string, ``bool`` ``true``/``false``;
* ``Literal[...]`` takes exactly one of its words; ``Annotated[T, FieldRule(...)]`` structures ``T``
  and checks the rule (:class:`regio.blueprint.fields.FieldRule`); a union of scalars picks the
  member whose type the value has; ``tuple[X, ...]`` takes a YAML list;
* regions are a union tagged by ``kind``: the class registered for the kind in
  :data:`~regio.blueprint.regionspec.REGION_CLASSES` when the region is read (so a kind
  registered later, in the user's own module, loads too), ``temporary`` when ``kind`` is
  omitted, aliases (``hashmap``) normalised first;
* seeds accept their YAML shorthands (a string, a list of strings and entries, ``{file: ...}``).

A refused value raises :class:`ValueProblem` (what was found, what is allowed);
:mod:`regio.blueprint.messages` turns the cattrs exception tree into issues with lines.
Unstructuring omits every value equal to its default (``omit_if_default``) and the fields that
are not YAML keys (``Blueprint.warnings``, ``SeedFile.text``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import IterableValidationError, IterableValidationNote
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from regio.blueprint.fields import FieldRule
from regio.blueprint.regionspec import Seed
from regio.blueprint.schema import describe_type
from regio.blueprint.spec import (
    KIND_ALIASES,
    REGION_CLASSES,
    Blueprint,
    RegionSpec,
    SeedEntry,
    SeedFile,
    TemporarySpec,
)

if TYPE_CHECKING:
    from attrs import AttrsInstance

__all__ = ["ValueProblem", "converter", "structure_blueprint", "unstructure_spec"]

_SEED_TYPE = get_args(Seed)[0]


class ValueProblem(Exception):
    """A YAML value a hook refused: ``value`` (what was found), ``expected`` (what is allowed,
    in words), ``choices`` (words to suggest from), ``at`` (path below the current one)."""

    def __init__(
        self,
        value: object,
        expected: str,
        *,
        choices: Sequence[str] = (),
        at: tuple[str | int, ...] = (),
    ) -> None:
        super().__init__(f"got {value!r}; expected {expected}")
        self.value = value
        self.expected = expected
        self.choices = tuple(choices)
        self.at = at


converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True, omit_if_default=True)


def _scalar(kind: type, words: str) -> Callable[[Any, Any], Any]:
    def hook(value: object, _: object) -> Any:
        if isinstance(value, bool) and kind is not bool:
            raise ValueProblem(value, words)
        if kind is float and isinstance(value, (int, float)):
            return float(value)
        if kind is int and isinstance(value, float) and value.is_integer():
            return int(value)  # 4096.0: an integer to JSON Schema too
        if not isinstance(value, kind):
            raise ValueProblem(value, words)
        return value

    return hook


for _kind, _words in ((int, "an integer"), (float, "a number"), (str, "a string")):
    converter.register_structure_hook(_kind, _scalar(_kind, _words))
converter.register_structure_hook(bool, _scalar(bool, "true or false"))


def _literal(tp: object) -> Callable[[Any, Any], Any]:
    values = get_args(tp)
    words = describe_type(tp)

    def hook(value: object, _: object) -> Any:
        if any(value == v and type(value) is type(v) for v in values):
            return value
        raise ValueProblem(value, words, choices=[str(v) for v in values])

    return hook


def _annotated(tp: object) -> Callable[[Any, Any], Any]:
    base, *extras = get_args(tp)
    rules = [r for r in extras if isinstance(r, FieldRule)]
    words = next((r.describe for r in rules if r.describe), None) or describe_type(tp)

    def hook(value: object, _: object) -> Any:
        try:
            out = converter.structure(value, base)
        except ValueProblem as exc:
            if exc.at:
                raise
            raise ValueProblem(value, words, choices=exc.choices) from None
        if not all(rule.holds(out) for rule in rules):
            raise ValueProblem(value, words)
        return out

    return hook


def _bare(tp: object) -> object:
    return get_args(tp)[0] if get_origin(tp) is Annotated else tp


def _scalar_union(tp: object) -> Callable[[Any, Any], Any]:
    members = [m for m in get_args(tp) if m is not type(None)]
    optional = len(members) < len(get_args(tp))
    words = describe_type(tp)

    def fits(value: object, member: object) -> bool:
        bare = _bare(member)
        bare = str if get_origin(bare) is Literal else bare
        if isinstance(value, bool):
            return bare is bool
        if bare is int and isinstance(value, float):
            return value.is_integer()
        if bare is float:
            return isinstance(value, (int, float))
        return isinstance(bare, type) and isinstance(value, bare)

    def hook(value: object, _: object) -> Any:
        if value is None and optional:
            return None
        for member in members:
            if fits(value, member):
                return converter.structure(value, member)
        raise ValueProblem(value, words)

    return hook


def _is_scalar_union(tp: object) -> bool:
    if get_origin(tp) not in (Union, type(int | str)) or tp == _SEED_TYPE:
        return False
    return all(isinstance(b := _bare(m), type) and not attrs.has(b) for m in get_args(tp))


def _sequence(tp: object) -> Callable[[Any, Any], Any]:
    item_type = get_args(tp)[0]
    words = describe_type(tp)

    def hook(value: object, _: object) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise ValueProblem(value, words)
        out: list[Any] = []
        errors: list[Exception] = []
        for index, item in enumerate(value):
            try:
                out.append(converter.structure(item, item_type))
            except Exception as exc:  # collected with its index, as cattrs does for lists
                note = IterableValidationNote(f"Structuring {tp} @ index {index}", index, item_type)
                exc.__notes__ = [*getattr(exc, "__notes__", []), note]
                errors.append(exc)
        if errors:
            # cattrs types ``cl`` as ``type`` but passes type forms such as ``list[int]`` there
            # itself (its own list hook); ``tuple[X, ...]`` is one.
            raise IterableValidationError(
                f"While structuring {tp!r}",
                errors,
                tp,  # type: ignore[arg-type]
            )
        return tuple(out)

    return hook


def _is_sequence(tp: object) -> bool:
    args = get_args(tp)
    return get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis


def _omitted(cls: type) -> dict[str, Any]:
    """Overrides that leave out the fields that are not YAML keys."""
    return {f.name: override(omit=True) for f in attrs.fields(cls) if "doc" not in f.metadata}


def _spec_structure(cls: type) -> Callable[[Any, Any], Any]:
    generated: Callable[[Any, Any], Any] = make_dict_structure_fn(
        cls,
        converter,
        _cattrs_forbid_extra_keys=True,
        _cattrs_detailed_validation=True,
        **_omitted(cls),
    )
    keys = ", ".join(f.name for f in attrs.fields(cls) if "doc" in f.metadata)

    def hook(value: object, _: object) -> Any:
        if not isinstance(value, dict):
            raise ValueProblem(value, f"a mapping with keys {keys}")
        return generated(value, cls)

    return hook


def _spec_unstructure(cls: type) -> Callable[[Any], Any]:
    return make_dict_unstructure_fn(cls, converter, _cattrs_omit_if_default=True, **_omitted(cls))


def _is_spec(tp: object) -> bool:
    return isinstance(tp, type) and attrs.has(tp) and tp is not RegionSpec


converter.register_structure_hook_factory(lambda t: get_origin(t) is Literal, _literal)
converter.register_structure_hook_factory(lambda t: get_origin(t) is Annotated, _annotated)
converter.register_structure_hook_factory(_is_scalar_union, _scalar_union)
converter.register_structure_hook_factory(_is_sequence, _sequence)
converter.register_structure_hook_factory(_is_spec, _spec_structure)
converter.register_unstructure_hook_factory(_is_spec, _spec_unstructure)


def _kind_words() -> str:
    aliases = ", ".join(f"{a} = {k}" for a, k in KIND_ALIASES.items())
    return f"one of the kinds {', '.join(REGION_CLASSES)}" + (
        f" (alias: {aliases})" if aliases else ""
    )


def _structure_region(value: object, _: object) -> RegionSpec:
    """The spec class registered for the region's ``kind`` (an alias normalised; ``temporary``
    when omitted), looked up when the region is read, so a kind registered after this module
    was imported (in the user's own module) loads too."""
    if not isinstance(value, dict):
        raise ValueProblem(value, "a mapping with at least name, kind and budget")
    cls: type[RegionSpec] = TemporarySpec
    if "kind" in value:
        kind = value["kind"]
        kind = KIND_ALIASES.get(kind, kind) if isinstance(kind, str) else kind
        if not isinstance(kind, str) or kind not in REGION_CLASSES:
            raise ValueProblem(
                value["kind"],
                _kind_words(),
                choices=[*REGION_CLASSES, *KIND_ALIASES],
                at=("kind",),
            )
        cls = REGION_CLASSES[kind]
        value = {k: v for k, v in value.items() if k != "kind"}
    region: RegionSpec = converter.structure(value, cls)
    return region


def _unstructure_region(spec: RegionSpec) -> dict[str, Any]:
    """The region's keys with ``kind`` right after ``name``."""
    data: dict[str, Any] = converter.unstructure(spec, type(spec))
    return {"name": data.pop("name"), "kind": spec.kind, **data}


def _structure_seed(value: object, _: object) -> tuple[SeedEntry, ...] | SeedFile | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (SeedEntry(text=value),)
    if isinstance(value, dict):
        seed_file: SeedFile = converter.structure(value, SeedFile)
        return seed_file
    if isinstance(value, list):
        items = [{"text": item} if isinstance(item, str) else item for item in value]
        entries: tuple[SeedEntry, ...] = converter.structure(items, tuple[SeedEntry, ...])
        return entries
    raise ValueProblem(value, "a seed")  # described by the field's FieldRule


def _unstructure_seed(seed: tuple[SeedEntry, ...] | SeedFile | None) -> Any:
    """The shortest YAML form: ``{file: ...}``, a string, or a list of strings and entries."""
    if seed is None or isinstance(seed, SeedFile):
        return converter.unstructure(seed)
    items = [
        entry.text if entry.key is None and entry.role is None else converter.unstructure(entry)
        for entry in seed
    ]
    return items[0] if len(items) == 1 and isinstance(items[0], str) else items


converter.register_structure_hook_func(lambda t: t == _SEED_TYPE, _structure_seed)
converter.register_unstructure_hook_func(lambda t: t in (_SEED_TYPE, Seed), _unstructure_seed)
# For ``RegionSpec`` itself only (a class hook would also catch every kind's class, which
# ``_is_spec`` builds).
converter.register_structure_hook_func(lambda t: t is RegionSpec, _structure_region)
converter.register_unstructure_hook_func(lambda t: t is RegionSpec, _unstructure_region)


def structure_blueprint(data: object) -> Blueprint:
    """YAML data -> :class:`Blueprint`.

    Raises :class:`ValueProblem` when ``data`` is not a mapping, else cattrs'
    ``ClassValidationError`` holding every problem (see :mod:`regio.blueprint.messages`).
    """
    blueprint: Blueprint = converter.structure(data, Blueprint)
    return blueprint


def unstructure_spec(spec: AttrsInstance) -> dict[str, Any]:
    """A spec object -> plain data (YAML keys in declaration order, defaults omitted; a region
    gets its ``kind`` right after its ``name``)."""
    if isinstance(spec, RegionSpec):
        return _unstructure_region(spec)
    data: dict[str, Any] = converter.unstructure(spec)
    return data
