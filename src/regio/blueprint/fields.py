"""Field helpers and vocabulary of the blueprint spec classes.

A spec field's *type* says everything the loader checks and the JSON Schema states: ``int``,
``str``, ``bool``, ``float``, ``Literal[...]`` for a fixed set of words, ``X | None``,
``tuple[X, ...]`` for a list, a spec class for a mapping, and ``Annotated[T, FieldRule(...)]`` for
a range, a pattern or a minimum length. :mod:`regio.blueprint.convert` structures YAML data by
these types with cattrs and :mod:`regio.blueprint.schema` writes the JSON Schema from them;
:func:`_field` only adds the key's documentation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sized
from typing import Annotated, Any, Literal, get_args

import attrs

__all__ = [
    "ADMISSIONS",
    "CLOCK_WORDS",
    "EVICTION_STRATEGIES",
    "LAYOUT_STRATEGIES",
    "TOKENIZERS",
    "TTLS",
    "VOLATILITIES",
    "FieldRule",
    "yaml_fields",
]

Volatility = Literal["stable", "grows", "rewritten"]
Admission = Literal["evict", "reject"]
EvictionStrategy = Literal["per_item", "bulk", "compact"]
LayoutStrategy = Literal["naive", "kind", "volatility", "regio"]
Tokenizer = Literal["o200k_base", "cl100k_base", "heuristic"]
Ttl = Literal["5m", "1h"]

VOLATILITIES: tuple[str, ...] = get_args(Volatility)
ADMISSIONS: tuple[str, ...] = get_args(Admission)
EVICTION_STRATEGIES: tuple[str, ...] = get_args(EvictionStrategy)
LAYOUT_STRATEGIES: tuple[str, ...] = get_args(LayoutStrategy)
TOKENIZERS: tuple[str, ...] = get_args(Tokenizer)
TTLS: tuple[str, ...] = get_args(Ttl)
#: Words that mark a template variable as a clock value (a time in a cached prefix).
CLOCK_WORDS = frozenset(
    {
        "now",
        "time",
        "date",
        "datetime",
        "timestamp",
        "today",
        "clock",
        "utcnow",
        "weekday",
        "tomorrow",
        "yesterday",
    }
)

PERCENT_PATTERN = r"^[0-9]+(\.[0-9]+)?%$"
HOOK_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*$"
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"
PROFILE_PATTERN = r"^[a-z][a-z0-9_]*:[A-Za-z0-9][A-Za-z0-9._*-]*$"


@attrs.frozen(kw_only=True)
class FieldRule:
    """A constraint declared in a field's type: ``Annotated[int, FieldRule(ge=1)]``.

    ``ge``/``gt``/``le`` bound a number, ``pattern`` (a regex, full match) and ``min_length``
    a string, ``min_items`` a list. ``describe`` phrases what is allowed for error messages and
    the docs (otherwise written from the JSON Schema). ``accepts`` is the type of the YAML
    value when it differs from the Python one (a shorthand the converter expands); the schema
    is generated from it.
    """

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    pattern: str | None = None
    min_length: int | None = None
    min_items: int | None = None
    describe: str | None = None
    accepts: Any = None

    def schema(self) -> dict[str, Any]:
        """The JSON Schema keywords of the constraint."""
        keywords = {
            "minimum": self.ge,
            "exclusiveMinimum": self.gt,
            "maximum": self.le,
            "pattern": self.pattern,
            "minLength": self.min_length,
            "minItems": self.min_items,
        }
        return {k: v for k, v in keywords.items() if v is not None}

    def holds(self, value: float | str | Sized) -> bool:
        """True when ``value`` (already of the right type: a number for the bounds, a string
        for ``pattern`` and ``min_length``, a list for ``min_items``) meets the constraint;
        NaN meets no bound."""
        if isinstance(value, (int, float)):
            bounded = self.ge is not None or self.gt is not None or self.le is not None
            if bounded and value != value:  # NaN: every comparison is false, so refuse it here
                return False
            if self.ge is not None and value < self.ge:
                return False
            if self.gt is not None and value <= self.gt:
                return False
            return self.le is None or value <= self.le
        if isinstance(value, str):
            if self.pattern is not None and re.fullmatch(self.pattern, value) is None:
                return False
            if self.min_length is not None and len(value) < self.min_length:
                return False
        return self.min_items is None or len(value) >= self.min_items


Int0 = Annotated[int, FieldRule(ge=0)]
Int1 = Annotated[int, FieldRule(ge=1)]
Share = Annotated[float, FieldRule(gt=0, le=1)]
NonEmpty = Annotated[str, FieldRule(min_length=1)]
Name = Annotated[
    str,
    FieldRule(
        pattern=NAME_PATTERN,
        describe="a name of letters, digits, '_' and '-', starting with a letter or '_'",
    ),
]
Hook = Annotated[
    str, FieldRule(pattern=HOOK_PATTERN, describe="a hook reference 'module:function'")
]
Budget = Annotated[
    Annotated[int, FieldRule(ge=0)] | Annotated[str, FieldRule(pattern=PERCENT_PATTERN)],
    FieldRule(describe='a number of tokens (integer >= 0) or a share of the window such as "12%"'),
]

#: A token high-water mark or low-water target: tokens (integer >= 1) or a share of the
#: region's budget such as ``"90%"``.
Mark = Annotated[
    Annotated[int, FieldRule(ge=1)] | Annotated[str, FieldRule(pattern=PERCENT_PATTERN)],
    FieldRule(describe='a number of tokens (integer >= 1) or a share of the budget such as "90%"'),
]


def _field(
    doc: str, *, default: object = attrs.NOTHING, factory: Callable[[], object] | None = None
) -> Any:
    """An attrs field that is a YAML key, documented by ``doc`` (its type does the rest)."""
    if factory is not None:
        return attrs.field(factory=factory, metadata={"doc": doc})
    return attrs.field(default=default, metadata={"doc": doc})


def yaml_fields(cls: type) -> list[attrs.Attribute[Any]]:
    """The attrs fields of ``cls`` that are YAML keys (those declared with :func:`_field`), in
    declaration order (common region fields first)."""
    return [f for f in attrs.fields(cls) if "doc" in f.metadata]
