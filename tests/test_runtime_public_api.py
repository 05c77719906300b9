"""``import regio`` gives the names a user needs, one name per concept, with typed returns."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
import typing
from collections import defaultdict
from pathlib import Path

import regio
from regio.engine import Engine

#: What a user of the package needs from ``import regio``.
NEEDED = {
    "Engine",
    "EngineOptions",
    "EngineSnapshot",
    "AgentLoop",
    "Blueprint",
    "load_blueprint",
    "Window",
    "Pinned",
    "SlidingWindow",
    "Compacting",
    "CompactHistory",
    "Keyed",
    "Temporary",
    "Clearable",
    "Checklist",
    "Custom",
    "ExtractiveSummarizer",
    "LLMSummarizer",
    "cache_model_for",
    "run_bench",
    "replay",
    "Message",
    "Text",
    "ToolUse",
    "ToolResult",
    "Thinking",
    "Event",
    "EventBus",
    "RegioError",
    "BlueprintError",
    "RegionFullError",
    "ContextOverflowError",
    "CompactionNoProgressError",
    "SubscriberError",
}


def _classes_in_source(module: str) -> list[str]:
    """The public classes a module defines at top level, read without importing it."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_")
    ]


def _public_classes() -> dict[str, set[str]]:
    where: dict[str, set[str]] = defaultdict(set)
    for info in pkgutil.walk_packages(regio.__path__, "regio."):
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError as exc:
            if (exc.name or "regio").split(".")[0] == "regio":
                raise
            # an adapter whose framework is not installed: read its classes from the source
            for name in _classes_in_source(info.name):
                where[name].add(info.name)
            continue
        for name, value in vars(module).items():
            mine = inspect.isclass(value) and value.__module__ == module.__name__
            if mine and not name.startswith("_"):
                where[name].add(module.__name__)
    return where


def test_the_package_exports_exactly_the_documented_names_from_their_home_modules() -> None:
    assert set(regio.__all__) == NEEDED | {"__version__"}
    for name in NEEDED:
        value = getattr(regio, name)
        assert value is not None
        assert getattr(importlib.import_module(value.__module__), name) is value
    namespace: dict[str, object] = {}
    exec("from regio import *", namespace)
    assert set(namespace) >= NEEDED


def test_no_two_public_classes_share_a_name() -> None:
    shared = {
        name: sorted(modules) for name, modules in _public_classes().items() if len(modules) > 1
    }
    assert shared == {}


def test_engine_entry_points_return_typed_values() -> None:
    for method in ("handle_tool_call", "snapshot", "stream_assistant", "classify"):
        hints = typing.get_type_hints(getattr(Engine, method))
        assert hints["return"] is not typing.Any, method
