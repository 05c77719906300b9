"""Each layout default is declared once (``regio.layout``) and every place that offers it, the
engine's options, the blueprint, the layout's own functions and the docs, says the same."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import attrs

from regio.blueprint.spec import LayoutSpec
from regio.layout import DEFAULT_CHUNK_TOKENS, DEFAULT_SETTLE_SHARE, assemble, pack_chunks
from regio.layout.settle import plan_settling
from regio.session._options import EngineOptions

DOCS = Path(__file__).resolve().parents[1] / "docs"
DEFAULTS = {"chunk_tokens": DEFAULT_CHUNK_TOKENS, "settle_share": DEFAULT_SETTLE_SHARE}


def _doc_default(page: str, name: str) -> str:
    """The default a docs table row gives for ``name`` (the last backticked cell of its row)."""
    for line in (DOCS / page).read_text(encoding="utf-8").splitlines():
        if line.startswith(f"| `{name}` |"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            quoted = [c for c in cells[1:] if re.fullmatch(r"`[^`]+`", c)]
            return quoted[-1].strip("`")
    raise AssertionError(f"docs/{page} has no table row for {name}")


def test_engine_options_default_to_the_layout_constants() -> None:
    fields = attrs.fields_dict(EngineOptions)
    assert {name: fields[name].default for name in DEFAULTS} == DEFAULTS
    assert {name: getattr(EngineOptions(), name) for name in DEFAULTS} == DEFAULTS


def test_the_blueprint_defaults_to_the_layout_constants() -> None:
    assert {name: getattr(LayoutSpec(), name) for name in DEFAULTS} == DEFAULTS


def test_the_layout_functions_default_to_their_constants() -> None:
    assemble_defaults = inspect.signature(assemble).parameters
    assert {name: assemble_defaults[name].default for name in DEFAULTS} == DEFAULTS
    assert inspect.signature(pack_chunks).parameters["chunk_tokens"].default == (
        DEFAULT_CHUNK_TOKENS
    )
    assert inspect.signature(plan_settling).parameters["settle_share"].default == (
        DEFAULT_SETTLE_SHARE
    )


def test_the_docs_give_the_declared_defaults() -> None:
    for page in ("runtime.md", "blueprint.md"):
        for name, value in DEFAULTS.items():
            assert float(_doc_default(page, name)) == value, (page, name)
