"""Blueprint limits: hostile YAML and seed files are refused with a BlueprintError naming the
file, the line and the fix; every limit is configurable through LoaderLimits."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from blueprint_support import HEAD, REGIONS, line_of
from regio.blueprint import BlueprintError, LoaderLimits, blueprint_json_schema, load_blueprint
from regio.blueprint import limits as limits_module
from regio.blueprint.limits import MAX_DEPTH_CEILING, LimitProblem, scan_events
from regio.blueprint.schema import SCHEMA_FILE
from regio.blueprint.spec import KINDS
from regio.cli import main


def alias_bomb(levels: int = 7, width: int = 9) -> str:
    """The classic "billion laughs": each level lists the previous one ``width`` times."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels):
        refs = ",".join([f"*a{level - 1}"] * width)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return "\n".join(lines) + "\n"


def refusal(text: str, **kwargs: object) -> BlueprintError:
    with pytest.raises(BlueprintError) as info:
        load_blueprint(text, **kwargs)  # type: ignore[arg-type]
    return info.value


# -- YAML size, depth, alias expansion, integers --------------------------------------------


def test_a_seven_level_alias_bomb_is_refused_before_it_is_expanded() -> None:
    text = alias_bomb()
    assert len(text.encode()) < 400
    [issue] = refusal(text).issues
    assert issue.line is not None
    assert "LoaderLimits.max_nodes" in issue.message and "aliases" in issue.message


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    [issue] = refusal("a: &x [1, *x]\n").issues
    assert issue.line == 1 and "infinite" in issue.message


@pytest.mark.parametrize("parser", ["libyaml", "pure-python"])
def test_yaml_nested_a_thousand_deep_is_a_blueprint_error_not_a_recursion_error(
    parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if parser == "pure-python":
        monkeypatch.setattr(limits_module, "_EventLoader", yaml.SafeLoader)
    elif not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("PyYAML was built without libyaml")
    for depth in (40, 999, 1000, 2048):
        for text in ("a: " + "[" * depth + "]" * depth + "\n", "a: " + "{b: " * depth):
            [issue] = refusal(text).issues
            assert issue.line == 1 and "LoaderLimits.max_depth" in issue.message, depth


def test_max_depth_cannot_be_raised_past_what_the_yaml_composer_can_nest() -> None:
    with pytest.raises(ValueError):
        LoaderLimits(max_depth=MAX_DEPTH_CEILING + 1)
    deepest = MAX_DEPTH_CEILING - 1  # under the root mapping
    text = "a: " + "[" * deepest + "]" * deepest + "\n"
    error = refusal(text, limits=LoaderLimits(max_depth=MAX_DEPTH_CEILING))
    assert "max_depth" not in str(error)  # composed without a RecursionError, refused as data


def test_block_nesting_past_the_depth_limit_names_the_line_where_it_is_passed() -> None:
    text = "".join("  " * i + f"k{i}:\n" for i in range(40)) + "  " * 40 + "v\n"
    [issue] = refusal(text).issues
    assert issue.line == 33  # the 33rd mapping opens on line 33


def test_a_five_thousand_digit_integer_is_refused_at_its_line() -> None:
    text = HEAD + REGIONS.replace("budget: 2000", "budget: " + "9" * 5000)
    [issue] = refusal(text).issues
    assert issue.line == line_of(text, "budget: 999")
    assert "5000 characters" in issue.message and "max_int_digits" in issue.message


def test_a_value_pyyaml_cannot_construct_is_a_blueprint_error_with_its_line() -> None:
    for value in ("2001-13-40", '!!int ""', "!!binary '%%%'"):
        text = HEAD + REGIONS.replace("seed: You are an agent.", f"seed: {value}")
        [issue] = refusal(text).issues
        assert issue.line == line_of(text, "seed:"), value


def test_blueprint_text_over_max_bytes_is_refused() -> None:
    text = HEAD + REGIONS + "# " + "x" * 2000 + "\n"
    [issue] = refusal(text, limits=LoaderLimits(max_bytes=1000)).issues
    assert "LoaderLimits.max_bytes" in issue.message
    assert load_blueprint(text).name == "t"  # the default limit is far above


def test_a_blueprint_file_over_max_bytes_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(HEAD + REGIONS + "# " + "x" * 2000 + "\n")
    error = refusal(path, limits=LoaderLimits(max_bytes=1000))  # type: ignore[arg-type]
    assert str(error).startswith(f"{path}: <root>: the blueprint file")
    assert "more than 1000 bytes" in str(error)


def test_each_limit_is_read_from_the_limits_passed() -> None:
    nested = "a: [[[[1]]]]\n"
    assert "max_depth" in str(refusal(nested, limits=LoaderLimits(max_depth=3)))
    for text in (alias_bomb(levels=3), nested):  # pass the limits stage, fail as blueprints
        assert "max_" not in str(refusal(text))
    assert "max_nodes" in str(refusal(alias_bomb(levels=3), limits=LoaderLimits(max_nodes=100)))
    assert "max_int_digits" in str(refusal("a: 123456\n", limits=LoaderLimits(max_int_digits=5)))


def test_a_limit_that_is_not_a_positive_integer_is_refused() -> None:
    with pytest.raises(ValueError):
        LoaderLimits(max_nodes=0)
    with pytest.raises(TypeError):
        LoaderLimits(max_depth="32")  # type: ignore[arg-type]


def _expanded_nodes(node: yaml.Node) -> int:
    if isinstance(node, yaml.MappingNode):
        return 1 + sum(_expanded_nodes(k) + _expanded_nodes(v) for k, v in node.value)
    if isinstance(node, yaml.SequenceNode):
        return 1 + sum(_expanded_nodes(item) for item in node.value)
    return 1


@settings(max_examples=60, deadline=None)
@given(levels=st.integers(1, 4), width=st.integers(1, 5), keyed=st.booleans())
def test_the_node_limit_is_passed_exactly_when_the_expanded_document_is_larger(
    levels: int, width: int, keyed: bool
) -> None:
    lines = ["l0: &l0 {x: 1, y: [2, 3]}" if keyed else "l0: &l0 [1, 2]"]
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    text = "\n".join(lines) + "\n"
    size = _expanded_nodes(yaml.compose(text, Loader=yaml.SafeLoader))
    scan_events(text, LoaderLimits(max_nodes=size))  # exactly at the limit: accepted
    with pytest.raises(LimitProblem, match="max_nodes"):
        scan_events(text, LoaderLimits(max_nodes=size - 1))


@settings(max_examples=40, deadline=None)
@given(depth=st.integers(1, 60), limit=st.integers(1, 40), flow=st.booleans())
def test_the_depth_limit_is_passed_exactly_when_the_nesting_is_deeper(
    depth: int, limit: int, flow: bool
) -> None:
    if flow:
        text = "[" * depth + "]" * depth + "\n"
    else:
        text = "".join("  " * i + "- \n" for i in range(depth - 1)) + "  " * (depth - 1) + "- x\n"
    limits = LoaderLimits(max_depth=limit)
    if depth > limit:
        with pytest.raises(LimitProblem, match="max_depth"):
            scan_events(text, limits)
    else:
        scan_events(text, limits)


# -- files that are not regular files ------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_as_blueprint_file_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "agent.yaml"
    os.mkfifo(fifo)
    error = refusal(fifo)  # type: ignore[arg-type]
    assert "is not a regular file" in str(error) and str(fifo) in str(error)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_dev_zero_as_blueprint_file_is_refused() -> None:
    assert "is not a regular file" in str(refusal(Path("/dev/zero")))  # type: ignore[arg-type]


def test_a_directory_as_blueprint_file_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "x.yaml"
    folder.mkdir()
    assert "is not a regular file" in str(refusal(folder))  # type: ignore[arg-type]


# -- seed files ------------------------------------------------------------------------------


def seeded(tmp_path: Path, file: str) -> Path:
    text = HEAD + REGIONS.replace("seed: You are an agent.", f"seed: {{file: {file!r}}}")
    path = tmp_path / "agents" / "bp.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def seed_issue(path: Path, **kwargs: object) -> str:
    with pytest.raises(BlueprintError) as info:
        load_blueprint(path, **kwargs)  # type: ignore[arg-type]
    [issue] = info.value.issues
    assert issue.path == "regions[0].seed.file"
    assert issue.line == line_of(path.read_text(), "seed:")
    return issue.message


def test_a_seed_file_under_the_blueprint_folder_is_read(tmp_path: Path) -> None:
    path = seeded(tmp_path, "prompts/system.md")
    (path.parent / "prompts").mkdir()
    (path.parent / "prompts" / "system.md").write_text("You are careful.")
    assert load_blueprint(path).regions[0].seed.text == "You are careful."  # type: ignore[union-attr]


def test_a_seed_file_outside_the_blueprint_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("api key")
    for file in ("../secret.txt", str(tmp_path / "secret.txt"), "/etc/hostname"):
        message = seed_issue(seeded(tmp_path, file))
        assert "outside the folders seed files may be read from" in message, file
        assert "seed_roots" in message


def test_a_symlink_that_escapes_the_blueprint_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("api key")
    path = seeded(tmp_path, "link.md")
    (path.parent / "link.md").symlink_to(tmp_path / "secret.txt")
    assert "outside the folders" in seed_issue(path)


def test_a_symlink_inside_the_blueprint_folder_is_followed(tmp_path: Path) -> None:
    path = seeded(tmp_path, "link.md")
    (path.parent / "real.md").write_text("Be brief.")
    (path.parent / "link.md").symlink_to(path.parent / "real.md")
    assert load_blueprint(path).regions[0].seed.text == "Be brief."  # type: ignore[union-attr]


def test_a_root_the_caller_allows_may_hold_seed_files(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "policy.md").write_text("Refund within 24 hours.")
    path = seeded(tmp_path, str(shared / "policy.md"))
    assert "outside" in seed_issue(path)
    bp = load_blueprint(path, limits=LoaderLimits(seed_roots=(shared,)))
    assert bp.regions[0].seed.text == "Refund within 24 hours."  # type: ignore[union-attr]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_or_folder_seed_is_refused_without_blocking(tmp_path: Path) -> None:
    path = seeded(tmp_path, "pipe.md")
    os.mkfifo(path.parent / "pipe.md")
    assert "is not a regular file" in seed_issue(path)
    path = seeded(tmp_path, "folder")
    (path.parent / "folder").mkdir()
    assert "is not a regular file" in seed_issue(path)


def test_a_seed_file_over_the_cap_is_refused(tmp_path: Path) -> None:
    path = seeded(tmp_path, "big.md")
    (path.parent / "big.md").write_text("x" * 5000)
    message = seed_issue(path, limits=LoaderLimits(max_seed_bytes=4096))
    assert "more than 4096 bytes" in message and "max_seed_bytes" in message


def test_a_seed_file_that_is_not_utf8_says_so(tmp_path: Path) -> None:
    path = seeded(tmp_path, "latin1.md")
    (path.parent / "latin1.md").write_bytes("café".encode("latin-1"))
    assert "not UTF-8 text" in seed_issue(path)


# -- defaults agree ------------------------------------------------------------------------


def test_a_compact_history_without_volatility_grows_from_yaml_as_in_python() -> None:
    from regio.blueprint import CompactHistorySpec, build_window
    from regio.regions import CompactHistory

    text = HEAD + REGIONS.replace(
        'budget: "50%"\n', 'budget: "50%"\n    eviction: {strategy: compact}\n'
    )
    text += "  - {name: history, kind: compact_history, source: conversation, budget: 500}\n"
    bp = load_blueprint(text)
    spec = bp.region("history")
    assert isinstance(spec, CompactHistorySpec)
    assert spec.volatility == "grows"
    assert CompactHistorySpec(name="h", budget=1, source="c").volatility == "grows"
    assert CompactHistory(name="h", budget=1, source="c").volatility == "grows"
    assert build_window(bp).region("history").volatility == "grows"
    schema = blueprint_json_schema()["$defs"]["Region_compact_history"]
    assert schema["properties"]["volatility"]["default"] == "grows"


# -- CLI -------------------------------------------------------------------------------------


def _bad_inputs(tmp_path: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for name, text in {
        "bomb": alias_bomb(),
        "deep": "a: " + "[" * 1000 + "]" * 1000 + "\n",
        "bigint": HEAD + REGIONS.replace("budget: 2000", "budget: " + "9" * 5000),
        "timestamp": HEAD + REGIONS.replace("seed: You are an agent.", "seed: 2001-13-40"),
        "seed_escape": HEAD + REGIONS.replace("seed: You are an agent.", "seed: {file: ../x}"),
        "syntax": "a: [\n",
    }.items():
        out[name] = tmp_path / f"{name}.yaml"
        out[name].write_text(text)
    out["not_utf8"] = tmp_path / "latin1.yaml"
    out["not_utf8"].write_bytes(b"name: caf\xe9\n")
    out["missing"] = tmp_path / "missing.yaml"
    out["folder"] = tmp_path / "folder.yaml"
    out["folder"].mkdir()
    if hasattr(os, "mkfifo"):
        out["fifo"] = tmp_path / "fifo.yaml"
        os.mkfifo(out["fifo"])
    return out


def test_cli_validate_refuses_every_bad_input_with_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, path in _bad_inputs(tmp_path).items():
        assert main(["validate", str(path)]) == 2, name
        captured = capsys.readouterr()
        lines = captured.err.splitlines()
        assert len(lines) == 1, (name, lines)
        assert lines[0].startswith(f"{path}"), (name, lines)
        assert "Traceback" not in captured.err and captured.out == "", name


def test_cli_schema_refuses_a_bad_indent_without_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for indent in ("x", "-1", "100000000"):
        with pytest.raises(SystemExit) as info:
            main(["schema", "--indent", indent])
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert "--indent" in err and "Traceback" not in err


# -- the shipped schema ----------------------------------------------------------------------


def test_the_shipped_schema_file_is_the_generated_schema() -> None:
    shipped = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert shipped == blueprint_json_schema(KINDS), (  # the package's own kinds
        "src/regio/data/blueprint.schema.json is stale: run "
        "`regio schema > src/regio/data/blueprint.schema.json`"
    )


def test_the_schema_id_is_a_stable_name_not_a_web_address() -> None:
    schema_id = blueprint_json_schema()["$id"]
    assert schema_id.startswith("urn:regio:") and "http" not in schema_id


def test_cli_schema_path_names_the_shipped_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--path"]) == 0
    assert Path(capsys.readouterr().out.strip()) == SCHEMA_FILE
    assert SCHEMA_FILE.is_file()
