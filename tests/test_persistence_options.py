"""Every engine option survives save and load: a field added to EngineOptions is either saved
or deliberately left to the caller of ``Engine.load``."""

from __future__ import annotations

from pathlib import Path

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from persistence_support import blueprint_text
from regio.runtime import Engine
from regio.runtime.options import EngineOptions
from regio.runtime.savedconfig import SAVED_OPTIONS
from regio.runtime.toolargs import ToolLimits

#: Options a state file never records, and why: the caller of Engine.load decides trust.
NOT_SAVED = {"allow_custom_hooks"}
#: Options saved beside SAVED_OPTIONS (copied into fresh containers).
COPIED = {"targets", "extra_tools"}


def test_every_engine_option_is_saved_or_left_to_the_loader_on_purpose() -> None:
    names = {f.name for f in attrs.fields(EngineOptions)}
    assert names - set(SAVED_OPTIONS) - COPIED == NOT_SAVED
    assert set(SAVED_OPTIONS) <= names


EDITS = {"edits": [{"type": "clear_tool_uses_20250919", "keep": {"type": "tool_uses", "value": 2}}]}


@settings(max_examples=20, deadline=None)
@given(
    context_tools=st.sampled_from(["auto", "all", "none", ("context_write",), ()]),
    editing=st.booleans(),
    echo=st.integers(min_value=1, max_value=5000),
    suffix=st.sampled_from([".json", ".msgpack"]),
)
def test_context_tools_editing_and_tool_limits_survive_save_and_load(
    tmp_path_factory: object, context_tools: object, editing: bool, echo: int, suffix: str
) -> None:
    folder = Path(tmp_path_factory.mktemp("opts"))  # type: ignore[attr-defined]
    engine = Engine.from_blueprint(
        blueprint_text(hook=None),
        context_tools=context_tools,
        context_management=EDITS if editing else None,
        tool_limits=ToolLimits(echo_chars=echo),
    )
    engine.add_user("hello")
    assert ("context_management" in engine.request()[1]) is editing
    path = folder / f"state{suffix}"
    engine.save(path)
    loaded = Engine.load(path)
    assert loaded.options.context_tools == engine.options.context_tools
    assert loaded.options.context_management == engine.options.context_management
    assert loaded.options.tool_limits == engine.options.tool_limits
    assert loaded.request()[1] == engine.request()[1]


def test_a_loaded_engine_counts_with_the_saved_model(tmp_path: Path) -> None:
    engine = Engine.from_blueprint(blueprint_text(hook=None))
    engine.add_user("hello")
    engine.save(tmp_path / "s.json")
    loaded = Engine.load(tmp_path / "s.json")
    assert getattr(loaded.counter, "model", "") == engine.options.model
