"""Options classes built at import (``EngineConfig`` from :class:`regio.EngineOptions`,
``ReliefSpec`` / ``ReliefToolSpec`` from the relief policy's fields) declare every field for
the type checker under ``if TYPE_CHECKING:`` (issue 26: options classes mypy can check, no
``__getattr__``). These tests hold the declarations to the built classes, name for name and
in order, so a field added to the options shows up in the checked declaration too."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import attrs
import pytest

from regio.blueprint import reliefspec
from regio.blueprint.reliefspec import ReliefSpec, ReliefToolSpec
from regio.persistence import _savedconfig
from regio.persistence._savedconfig import ConfigExtras, EngineConfig


def _declared(module: object, cls: str) -> list[str]:
    """The names annotated in class ``cls`` of ``module`` under ``if TYPE_CHECKING:``
    (inside the class, or the class defined there), in source order."""
    tree = ast.parse(Path(inspect.getfile(module)).read_text("utf-8"))  # type: ignore[arg-type]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in ast.walk(node):
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.append(item.target.id)
    return names


@pytest.mark.parametrize("spec", [ReliefSpec, ReliefToolSpec])
def test_a_relief_spec_declares_every_field_it_is_built_with(spec):
    built = [f.name for f in attrs.fields(spec)]
    assert _declared(reliefspec, spec.__name__) == built


def test_the_saved_engine_config_declares_every_saved_option():
    extras = list(ConfigExtras.__struct_fields__)
    built = [f for f in EngineConfig.__struct_fields__ if f not in extras]
    declared = _declared(_savedconfig, "EngineConfig")
    assert declared[-len(built) :] == built
    assert "__getattr__" not in inspect.getsource(_savedconfig)


def test_no_options_class_falls_back_to_getattr_for_the_type_checker():
    for module in (reliefspec, _savedconfig):
        assert "def __getattr__" not in inspect.getsource(module)  # type: ignore[arg-type]
