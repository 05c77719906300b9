"""Blueprints: declare a whole context window in one YAML file.

``load_blueprint(path_or_text) -> Blueprint`` reads and validates a blueprint (every error names
the YAML path and line), ``dump_blueprint(bp) -> str`` writes it back, ``blueprint_json_schema()``
exports the JSON Schema for editors and ``build_window(bp)`` builds the runtime
:class:`regio.regions.Window`. The key reference is ``docs/blueprint.md``.
"""

from __future__ import annotations

from regio.blueprint.build import build_window
from regio.blueprint.capturespec import CaptureSpec
from regio.blueprint.errors import (
    BlueprintError,
    BlueprintIssue,
    BlueprintWarning,
    UnknownRegionError,
)
from regio.blueprint.limits import LoaderLimits
from regio.blueprint.loader import dump_blueprint, load_blueprint, validate_blueprint
from regio.blueprint.schema import blueprint_json_schema
from regio.blueprint.spec import (
    Blueprint,
    CacheSpec,
    ChecklistSpec,
    ClearableSpec,
    CompactHistorySpec,
    CompactingSpec,
    CustomSpec,
    EvictionSpec,
    KeyedSpec,
    LayoutSpec,
    ModelSpec,
    PinnedSpec,
    RegionSpec,
    SeedEntry,
    SeedFile,
    SlidingWindowSpec,
    SummarizerSpec,
    TemporarySpec,
    ToolsSpec,
    WindowSpec,
)

__all__ = [
    "Blueprint",
    "BlueprintError",
    "BlueprintIssue",
    "BlueprintWarning",
    "CacheSpec",
    "CaptureSpec",
    "ChecklistSpec",
    "ClearableSpec",
    "CompactHistorySpec",
    "CompactingSpec",
    "CustomSpec",
    "EvictionSpec",
    "KeyedSpec",
    "LayoutSpec",
    "LoaderLimits",
    "ModelSpec",
    "PinnedSpec",
    "RegionSpec",
    "SeedEntry",
    "SeedFile",
    "SlidingWindowSpec",
    "SummarizerSpec",
    "TemporarySpec",
    "ToolsSpec",
    "UnknownRegionError",
    "WindowSpec",
    "blueprint_json_schema",
    "build_window",
    "dump_blueprint",
    "load_blueprint",
    "validate_blueprint",
]
