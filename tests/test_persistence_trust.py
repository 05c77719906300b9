"""Trust model of state files: custom regions save and load again, their hooks come only from
the blueprint the engine was created with (its hash is checked), and a state file never selects
code."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import attrs
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from persistence_support import HOOK, blueprint_text, driven_engine
from regio.engine import Engine
from regio.errors import RegioError, RuntimeStateError

PROBE = "regio_state_probe_module"


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An importable module whose import would be visible (it must never be imported)."""
    folder = tmp_path / "probe"
    folder.mkdir()
    (folder / f"{PROBE}.py").write_text("def render(region):\n    return 'pwned'\n")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, PROBE, raising=False)
    return f"{PROBE}:render"


def _edit(path: Path, edit: object) -> None:
    """Apply ``edit(state_dict)`` to a JSON or msgpack state file in place."""
    msgpack = path.suffix == ".msgpack"
    raw = path.read_bytes()
    state = msgspec.msgpack.decode(raw) if msgpack else json.loads(raw)
    edit(state)  # type: ignore[operator]
    path.write_bytes(msgspec.msgpack.encode(state) if msgpack else json.dumps(state).encode())


def _region(state: dict, name: str) -> dict:  # type: ignore[type-arg]
    return next(r for r in state["window"]["regions"] if r["name"] == name)


@pytest.mark.parametrize("suffix", [".json", ".msgpack"])
def test_an_engine_with_a_hooked_custom_region_loads_from_its_blueprint(
    tmp_path: Path, suffix: str
) -> None:
    engine = driven_engine()
    path = engine.save(tmp_path / f"state{suffix}")
    loaded = Engine.load(path, blueprint=blueprint_text(), allow_custom_hooks=True)
    assert loaded.window.snapshot_state() == engine.window.snapshot_state()
    assert loaded.request()[1] == engine.request()[1]
    assert loaded.window.region("odd").render_text() == repr(loaded.window.region("odd"))


@pytest.mark.parametrize("suffix", [".json", ".msgpack"])
@pytest.mark.parametrize("allow", [False, True])
def test_an_engine_with_a_hookless_custom_region_loads_with_or_without_the_flag(
    tmp_path: Path, suffix: str, allow: bool
) -> None:
    engine = driven_engine(hook=None)
    path = engine.save(tmp_path / f"state{suffix}")
    loaded = Engine.load(path, allow_custom_hooks=allow)
    assert loaded.window.snapshot_state() == engine.window.snapshot_state()
    assert loaded.request()[1] == engine.request()[1]


@pytest.mark.parametrize("allow", [False, True])
def test_hooks_are_not_restored_without_the_blueprint(tmp_path: Path, allow: bool) -> None:
    path = driven_engine().save(tmp_path / "state.json")
    with pytest.raises(RuntimeStateError, match=r"state\.json.*'odd'.*only from the blueprint"):
        Engine.load(path, allow_custom_hooks=allow)


def test_hooks_need_the_allow_flag_even_with_the_blueprint(tmp_path: Path) -> None:
    path = driven_engine().save(tmp_path / "state.json")
    with pytest.raises(RuntimeStateError, match="allow_custom_hooks=True"):
        Engine.load(path, blueprint=blueprint_text())


def test_a_state_file_naming_other_code_is_refused_and_the_code_never_imported(
    tmp_path: Path, probe: str
) -> None:
    path = driven_engine().save(tmp_path / "state.json")
    _edit(path, lambda s: _region(s, "odd")["options"].update(render=probe))
    for kwargs in ({"blueprint": blueprint_text()}, {}):
        with pytest.raises(RuntimeStateError, match=r"state\.json.*'odd'"):
            Engine.load(path, allow_custom_hooks=True, **kwargs)  # type: ignore[arg-type]
    assert PROBE not in sys.modules


def test_a_hook_added_to_a_hookless_region_is_refused(tmp_path: Path, probe: str) -> None:
    path = driven_engine(hook=None).save(tmp_path / "state.json")
    _edit(path, lambda s: _region(s, "odd")["options"].update(on_write=probe))
    with pytest.raises(RuntimeStateError, match="only from the blueprint"):
        Engine.load(path, allow_custom_hooks=True)
    with pytest.raises(RuntimeStateError, match="does not declare"):
        Engine.load(path, allow_custom_hooks=True, blueprint=blueprint_text(hook=None))
    assert PROBE not in sys.modules


def test_a_blueprint_that_differs_from_the_saved_one_is_refused(tmp_path: Path, probe: str) -> None:
    path = driven_engine().save(tmp_path / "state.json")
    other = blueprint_text(hook=probe)
    with pytest.raises(RuntimeStateError, match="sha256"):
        Engine.load(path, blueprint=other, allow_custom_hooks=True)
    assert PROBE not in sys.modules


def test_a_saved_blueprint_edited_with_its_hash_still_needs_the_real_blueprint(
    tmp_path: Path, probe: str
) -> None:
    """Rewriting the saved blueprint text and its hash together does not make the state trusted:
    the caller's blueprint is what is trusted, and it no longer matches."""
    from regio.persistence._statefile import text_sha256

    path = driven_engine().save(tmp_path / "state.json")

    def forge(state: dict) -> None:  # type: ignore[type-arg]
        text = blueprint_text(hook=probe)
        state["config"]["blueprint_text"] = text
        state["config"]["blueprint_sha256"] = text_sha256(text)
        _region(state, "odd")["options"]["render"] = probe

    _edit(path, forge)
    with pytest.raises(RuntimeStateError, match="sha256"):
        Engine.load(path, blueprint=blueprint_text(), allow_custom_hooks=True)
    assert PROBE not in sys.modules


def test_a_saved_blueprint_that_does_not_match_its_hash_is_corrupt(tmp_path: Path) -> None:
    path = driven_engine(hook=None).save(tmp_path / "state.json")
    _edit(path, lambda s: s["config"].update(blueprint_text="version: 1\n"))
    with pytest.raises(RuntimeStateError, match="does not match its saved sha256"):
        Engine.load(path)


def test_a_blueprint_cannot_be_given_for_an_engine_built_without_one(tmp_path: Path) -> None:
    engine = driven_engine(hook=None)
    engine.options = attrs.evolve(engine.options, blueprint_text=None)
    path = engine.save(tmp_path / "state.json")
    assert Engine.load(path).request()[1] == engine.request()[1]
    with pytest.raises(RuntimeStateError, match="not created from a blueprint"):
        Engine.load(path, blueprint=blueprint_text(hook=None))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    hook=st.sampled_from(["render", "on_write", "on_overflow"]),
    ref=st.text(min_size=1, max_size=40).filter(lambda r: r != HOOK),
    with_blueprint=st.booleans(),
)
def test_property_any_hook_reference_edited_into_a_state_is_refused(
    tmp_path: Path, hook: str, ref: str, with_blueprint: bool
) -> None:
    path = driven_engine().save(tmp_path / "state.json")
    _edit(path, lambda s: _region(s, "odd")["options"].update({hook: ref}))
    kwargs = {"blueprint": blueprint_text()} if with_blueprint else {}
    imported = set(sys.modules)
    with pytest.raises(RegioError) as caught:
        Engine.load(path, allow_custom_hooks=True, **kwargs)  # type: ignore[arg-type]
    assert isinstance(caught.value, RuntimeStateError) and str(path) in str(caught.value)
    assert set(sys.modules) == imported


def test_a_window_that_is_not_the_blueprints_is_refused(tmp_path: Path) -> None:
    path = driven_engine().save(tmp_path / "state.json")
    _edit(path, lambda s: s["window"]["regions"].reverse())
    with pytest.raises(RuntimeStateError, match="are not the blueprint's"):
        Engine.load(path, blueprint=blueprint_text(), allow_custom_hooks=True)


def test_an_invalid_blueprint_given_to_load_is_reported_as_such(tmp_path: Path) -> None:
    path = driven_engine().save(tmp_path / "state.json")
    with pytest.raises(RuntimeStateError, match="blueprint given to load is invalid"):
        Engine.load(path, blueprint="version: 1\nregions: 5\n", allow_custom_hooks=True)
