"""Region kind registry: ``REGION_KINDS`` and :func:`make_region` (``hashmap`` -> ``keyed``)."""

from __future__ import annotations

from typing import Any

import attrs

from regio.errors import RegionConfigError
from regio.regions import (  # noqa: F401 (declare kinds)
    compaction,
    conversation,
    custom,
    keyed,
    simple,
)
from regio.regions.base import Region, declared_kinds

__all__ = ["KIND_ALIASES", "REGION_KINDS", "kind_class", "make_region"]

#: Other names of kinds: ``hashmap`` is ``keyed``.
KIND_ALIASES: dict[str, str] = {"hashmap": "keyed"}

REGION_KINDS: dict[str, type[Region]] = {
    **declared_kinds(),
    **{alias: declared_kinds()[kind] for alias, kind in KIND_ALIASES.items()},
}
"""Kind name -> class of the kinds in this package (each kind class declares itself by its
``kind``). A new kind is one module defining a :class:`Region` subclass; :func:`make_region`
finds every kind defined so far, in this package or elsewhere."""


def kind_class(kind: str) -> type[Region] | None:
    """The class of ``kind`` (an alias resolved), or ``None``."""
    return declared_kinds().get(KIND_ALIASES.get(kind, kind))


def make_region(kind: str, *, allow_custom_hooks: bool = False, **options: Any) -> Region:
    """Build a region of ``kind`` from keyword ``options`` (the class's constructor keywords).

    ``allow_custom_hooks`` is passed to ``custom`` regions only. Raises
    :class:`RegionConfigError` for an unknown kind or an unknown option (naming the valid ones).
    """
    cls = kind_class(kind)
    if cls is None:
        known = sorted({*declared_kinds(), *KIND_ALIASES})
        raise RegionConfigError(f"unknown region kind {kind!r}; known kinds: {', '.join(known)}")
    if any(f.name == "allow_custom_hooks" for f in attrs.fields(cls)):
        options["allow_custom_hooks"] = allow_custom_hooks or options.get(
            "allow_custom_hooks", False
        )
    try:
        return cls(**options)
    except TypeError as exc:
        valid = sorted(f.alias or f.name for f in attrs.fields(cls) if f.init)
        raise RegionConfigError(
            f"region kind {kind!r}: {exc}; valid options: {', '.join(valid)}"
        ) from exc
