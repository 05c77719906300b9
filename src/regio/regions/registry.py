"""Region kind registry: ``REGION_KINDS`` and :func:`make_region` (``hashmap`` -> ``keyed``)."""

from __future__ import annotations

from typing import Any

from regio.errors import RegionConfigError
from regio.regions.base import Region
from regio.regions.compaction import CompactHistory, Compacting
from regio.regions.conversation import SlidingWindow
from regio.regions.custom import Custom
from regio.regions.keyed import Checklist, Keyed
from regio.regions.simple import Clearable, Pinned, Temporary

__all__ = ["KIND_ALIASES", "REGION_KINDS", "make_region"]

REGION_KINDS: dict[str, type[Region]] = {
    "pinned": Pinned,
    "sliding_window": SlidingWindow,
    "compacting": Compacting,
    "compact_history": CompactHistory,
    "keyed": Keyed,
    "hashmap": Keyed,
    "temporary": Temporary,
    "clearable": Clearable,
    "checklist": Checklist,
    "custom": Custom,
}
"""Kind name -> class. ``hashmap`` is an alias of ``keyed``."""

KIND_ALIASES: dict[str, str] = {"hashmap": "keyed"}


def make_region(kind: str, *, allow_custom_hooks: bool = False, **options: Any) -> Region:
    """Build a region of ``kind`` from keyword ``options`` (the class's constructor keywords).

    ``allow_custom_hooks`` is passed to ``custom`` regions only. Raises
    :class:`RegionConfigError` for an unknown kind or an unknown option (naming the valid ones).
    """
    cls = REGION_KINDS.get(kind)
    if cls is None:
        raise RegionConfigError(
            f"unknown region kind {kind!r}; known kinds: {', '.join(sorted(REGION_KINDS))}"
        )
    if cls is Custom:
        options["allow_custom_hooks"] = allow_custom_hooks or options.get(
            "allow_custom_hooks", False
        )
    try:
        return cls(**options)
    except TypeError as exc:
        import attrs

        valid = sorted(f.alias or f.name for f in attrs.fields(cls) if f.init)
        raise RegionConfigError(
            f"region kind {kind!r}: {exc}; valid options: {', '.join(valid)}"
        ) from exc
