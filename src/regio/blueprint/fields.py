"""Field helpers and vocabulary of the blueprint spec classes (DESIGN §1-§3 names).

Every spec field is declared with :func:`_field`, which stores its documentation and the JSON
Schema of its value in attrs metadata; :func:`yaml_fields` lists the fields that are YAML keys.
"""

from __future__ import annotations

from typing import Any

import attrs

KINDS = (
    "pinned",
    "sliding_window",
    "compacting",
    "compact_history",
    "keyed",
    "temporary",
    "clearable",
    "checklist",
    "custom",
)
#: Accepted spellings that are normalised on load (DESIGN §2: ``keyed`` alias ``hashmap``).
KIND_ALIASES = {"hashmap": "keyed"}
VOLATILITIES = ("stable", "grows", "rewritten")
ADMISSIONS = ("evict", "reject")
EVICTION_STRATEGIES = ("per_item", "bulk", "compact")
LAYOUT_STRATEGIES = ("naive", "kind", "volatility", "regio")
TOKENIZERS = ("o200k_base", "cl100k_base", "heuristic")
TTLS = ("5m", "1h")
#: Kinds that window reclaim never touches (DESIGN §2); any ``admission: reject`` region joins them.
NEVER_SHRINKING_KINDS = ("pinned", "keyed", "checklist", "compact_history")
#: Kinds whose content is written every turn, so ``volatility: stable`` is a contradiction.
PER_TURN_KINDS = ("sliding_window", "temporary", "clearable", "compacting", "checklist")
#: Words that mark a template variable as a clock value (FC-27).
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

_INT0 = {"type": "integer", "minimum": 0}
_INT1 = {"type": "integer", "minimum": 1}
_SHARE = {"type": "number", "exclusiveMinimum": 0, "maximum": 1}
_OPT_INT1 = {"type": ["integer", "null"], "minimum": 1}
_OPT_INT0 = {"type": ["integer", "null"], "minimum": 0}


def _field(
    doc: str,
    *,
    schema: dict[str, Any] | None = None,
    default: Any = attrs.NOTHING,
    factory: Any = None,
    nested: type | None = None,
    describe: str | None = None,
) -> Any:
    """An attrs field whose metadata documents it (``doc``), types it (``schema`` or ``nested``
    class) and, optionally, phrases what is allowed (``describe``)."""
    metadata = {"doc": doc, "schema": schema, "nested": nested, "describe": describe}
    if factory is not None:
        return attrs.field(factory=factory, metadata=metadata)
    return attrs.field(default=default, metadata=metadata)


def yaml_fields(cls: type) -> list[attrs.Attribute[Any]]:
    """The attrs fields of ``cls`` that are YAML keys (those declared with :func:`_field`), in
    declaration order (common region fields first)."""
    return [f for f in attrs.fields(cls) if "doc" in f.metadata]
