"""Every engine option survives save and load: the saved config is derived from
EngineOptions (one declaration), so a field added to the options is saved unless it is
declared not saved, and a state written before an option existed loads with its default."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from persistence_support import blueprint_text
from regio.engine import Engine
from regio.layout import ToolSpec
from regio.persistence._load import read_state
from regio.persistence._savedconfig import NOT_SAVED, SAVED_OPTIONS, ConfigExtras, EngineConfig
from regio.policies.relief import ReliefPolicy
from regio.session._options import CARRY_FORWARD_MODES, TOOL_NAMES, EngineOptions
from regio.session._toolargs import ToolLimits


def test_every_engine_option_is_saved_unless_declared_not_saved_with_a_reason() -> None:
    names = set(EngineOptions.names())
    assert set(NOT_SAVED) <= names
    assert all(reason.strip() for reason in NOT_SAVED.values())
    assert set(SAVED_OPTIONS) == names - set(NOT_SAVED)
    extras = set(ConfigExtras.__struct_fields__)
    assert set(EngineConfig.__struct_fields__) == set(SAVED_OPTIONS) | extras


@pytest.mark.parametrize("name", SAVED_OPTIONS)
def test_a_state_saved_before_an_option_existed_loads_with_the_option_default(
    tmp_path: Path, name: str
) -> None:
    engine = Engine.from_blueprint(blueprint_text(hook=None))
    engine.add_user("hello")
    path = engine.save(tmp_path / "s.json")
    data = json.loads(path.read_bytes())
    del data["config"][name]
    if name == "blueprint_text":  # its hash is saved with it: a state without one has neither
        del data["config"]["blueprint_sha256"]
    path.write_text(json.dumps(data), encoding="utf-8")
    default = attrs.fields_dict(EngineOptions)[name].default
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        default = default.factory()
    loaded = Engine.load(path)
    assert getattr(loaded.options, name) == getattr(EngineOptions(**{name: default}), name)


_TOOL = ToolSpec("grep", "Search files.", {"type": "object", "properties": {}})
OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "provider": st.sampled_from(["anthropic", "openai"]),
        "model": st.sampled_from(["", "claude-sonnet-4-5"]),
        "context_window": st.none() | st.integers(50_000, 400_000),
        "output_reserve": st.integers(0, 4_000),
        "strategy": st.sampled_from(["regio", "naive", "kind", "volatility"]),
        "ttl": st.sampled_from(["5m", "1h"]),
        "chunk_tokens": st.integers(1, 4_096),
        "settle_share": st.floats(0.01, 1.0),
        "targets": st.dictionaries(st.sampled_from(["conversation", "facts"]), st.integers(1, 9)),
        "compact_trigger": st.none() | st.integers(1, 10**6),
        "auto_compact": st.booleans(),
        "no_progress_limit": st.integers(1, 9),
        "cut_at_turns": st.booleans(),
        "carry_forward": st.sampled_from(CARRY_FORWARD_MODES),
        "standing_instructions": st.text(max_size=40),
        "session_id": st.none() | st.text(min_size=1, max_size=12),
        "context_tools": st.sampled_from(["auto", "all", "none"])
        | st.lists(st.sampled_from(TOOL_NAMES), max_size=3, unique=True).map(tuple),
        "extra_tools": st.lists(st.just(_TOOL), max_size=2).map(tuple),
        "tool_limits": st.builds(ToolLimits, echo_chars=st.integers(1, 5000)),
        "relief": st.none() | st.builds(ReliefPolicy, keep_last=st.integers(0, 9)),
    },
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=OPTIONS, suffix=st.sampled_from([".json", ".msgpack"]))
def test_any_options_survive_save_and_load_as_they_are(
    tmp_path_factory: object, values: dict[str, object], suffix: str
) -> None:
    folder = Path(tmp_path_factory.mktemp("any"))  # type: ignore[attr-defined]
    engine = Engine.from_blueprint(blueprint_text(hook=None), **values)
    path = engine.save(folder / f"state{suffix}")
    loaded = Engine.load(path)
    assert loaded.options == attrs.evolve(engine.options, allow_custom_hooks=False)
    config = read_state(path).config
    assert isinstance(config, EngineConfig)
    assert msgspec.structs.asdict(config).keys() >= set(SAVED_OPTIONS)


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
