"""Loading and dumping blueprint YAML.

``load_blueprint`` runs four stages and stops at the first stage that finds problems, reporting
all problems of that stage at once in one :class:`BlueprintError`:

1. limits (size, nesting depth, alias expansion, integer length; :mod:`.limits`), YAML syntax
   (PyYAML safe loader), duplicate keys;
2. structure: known keys, required keys, value types and ranges, region kinds (cattrs with
   detailed validation, :mod:`.convert`; issues phrased by :mod:`.messages`);
3. seed files are regular UTF-8 files under the blueprint's folder (or an allowed root), within
   the size cap;
4. semantics across keys (:mod:`.validate`).

Warnings are attached to the result as ``Blueprint.warnings``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path as FsPath
from typing import Any

import attrs
import yaml
from cattrs.errors import ClassValidationError, IterableValidationError

from regio.blueprint.convert import ValueProblem, structure_blueprint, unstructure_spec
from regio.blueprint.errors import BlueprintError, BlueprintIssue, BlueprintWarning
from regio.blueprint.limits import LimitProblem, LoaderLimits, read_text_file, scan_events
from regio.blueprint.messages import structure_issues
from regio.blueprint.source import Located, format_path, parse_yaml
from regio.blueprint.spec import Blueprint, RegionSpec, SeedEntry, SeedFile
from regio.blueprint.validate import validate_semantics
from regio.textrepair import repair_text

__all__ = ["BlueprintSource", "dump_blueprint", "load_blueprint", "validate_blueprint"]


@attrs.frozen
class BlueprintSource:
    """Where a blueprint came from: ``file`` (display name), ``base_dir`` (for seed files) and
    the parsed document with its line map."""

    file: str
    base_dir: FsPath
    located: Located | None = None

    def line(self, path: Sequence[str | int]) -> int | None:
        """The line of a YAML path, or ``None``."""
        return self.located.line(path) if self.located is not None else None


def _refuse(file: str, line: int | None, message: str, path: str = "<root>") -> BlueprintError:
    return BlueprintError([BlueprintIssue(path, line, message)], file)


def _read_source(
    source: str | os.PathLike[str], base_dir: str | os.PathLike[str] | None, limits: LoaderLimits
) -> tuple[str, str, FsPath]:
    """(text, display name, base dir) of a path or of YAML text, at most ``limits.max_bytes``."""
    is_path = isinstance(source, os.PathLike)
    if isinstance(source, str) and "\n" not in source:
        is_path = source.endswith((".yaml", ".yml")) or os.path.isfile(source)
    if is_path:
        path = FsPath(source)
        try:
            text = read_text_file(path, limits.max_bytes, "the blueprint file")
        except LimitProblem as exc:
            raise _refuse(str(path), None, exc.message) from None
        return text, str(path), FsPath(base_dir) if base_dir is not None else path.parent
    text = str(source)
    if (
        len(text) > limits.max_bytes
        or len(text.encode("utf-8", "surrogatepass")) > limits.max_bytes
    ):
        raise _refuse(
            "<blueprint>",
            None,
            f"the blueprint text has more than {limits.max_bytes} bytes (LoaderLimits.max_bytes); "
            "shorten it or raise the limit",
        )
    return text, "<blueprint>", FsPath(base_dir) if base_dir is not None else FsPath.cwd()


def _reader_line(text: str, exc: yaml.reader.ReaderError) -> int | None:
    position = getattr(exc, "position", None)
    return text.count("\n", 0, position) + 1 if isinstance(position, int) else None


def _parse(text: str, file: str, limits: LoaderLimits) -> Located:
    try:
        scan_events(text, limits)
    except LimitProblem as exc:
        raise _refuse(file, exc.line, exc.message) from None
    try:
        return parse_yaml(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or "invalid YAML"
        context = f" ({exc.context})" if exc.context else ""
        raise _refuse(file, line, f"YAML syntax error: {problem}{context}") from exc
    except yaml.reader.ReaderError as exc:
        raise _refuse(
            file, _reader_line(text, exc), f"YAML error: {exc.reason} (character {exc.character!r})"
        ) from exc
    except yaml.YAMLError as exc:
        raise _refuse(file, None, f"YAML error: {exc}") from exc


def _seed_target(spec_file: str, source: BlueprintSource, limits: LoaderLimits) -> FsPath:
    """The resolved path of a seed file, refused (:class:`LimitProblem`) when it lies outside
    the blueprint's folder and every allowed root (``..``, absolute paths, symlinks out)."""
    base = source.base_dir.resolve()
    roots = [base, *(root.resolve() for root in limits.seed_roots)]
    target = (base / spec_file).resolve()
    if not any(target == root or target.is_relative_to(root) for root in roots):
        allowed = ", ".join(repr(str(r)) for r in roots)
        raise LimitProblem(
            None,
            f"seed file {spec_file!r} resolves to {str(target)!r}, outside the folders seed files "
            f"may be read from ({allowed}); move it under the blueprint's folder or allow its "
            "folder with LoaderLimits(seed_roots=...)",
        )
    return target


def _resolve_seed_files(bp: Blueprint, source: BlueprintSource, limits: LoaderLimits) -> Blueprint:
    issues: list[BlueprintIssue] = []
    regions: list[RegionSpec] = []
    for index, spec in enumerate(bp.regions):
        if isinstance(spec.seed, SeedFile):
            path = ("regions", index, "seed", "file")
            try:
                target = _seed_target(spec.seed.file, source, limits)
                text = read_text_file(target, limits.max_seed_bytes, "seed file")
            except LimitProblem as exc:
                issues.append(
                    BlueprintIssue(
                        format_path(path),
                        source.line(path),
                        f"{exc.message} (seed files are regular UTF-8 text files, relative to "
                        "the blueprint file's folder)",
                    )
                )
                regions.append(spec)
                continue
            spec = attrs.evolve(spec, seed=attrs.evolve(spec.seed, text=text))
        regions.append(spec)
    if issues:
        raise BlueprintError(issues, source.file)
    return attrs.evolve(bp, regions=tuple(regions))


def load_blueprint(
    source: str | os.PathLike[str],
    *,
    base_dir: str | os.PathLike[str] | None = None,
    limits: LoaderLimits | None = None,
) -> Blueprint:
    """Load and validate a blueprint.

    ``source`` is a path (``os.PathLike``, or a one-line string that ends in ``.yaml``/``.yml``
    or names an existing file) or YAML text. Seed files resolve against ``base_dir`` (default:
    the blueprint file's folder, or the working directory for text) and must lie under it or
    under one of ``limits.seed_roots``. ``limits`` (:class:`LoaderLimits`, default
    ``LoaderLimits()``) bounds the file size, nesting depth, alias expansion, integer length
    and seed file size (``docs/security.md``).

    Returns the :class:`Blueprint` with ``warnings`` (tuple of :class:`BlueprintWarning`) and
    ``source`` attached. Raises :class:`BlueprintError` listing every issue of the first stage
    that failed, each as ``FILE:LINE: path: message``.
    """
    limits = limits if limits is not None else LoaderLimits()
    text, file, base = _read_source(source, base_dir, limits)
    located = _parse(text, file, limits)
    blueprint, issues = _structure(located)
    if blueprint is None or issues:
        raise BlueprintError(_by_line(issues), file)
    bp_source = BlueprintSource(file, base, located)
    blueprint = _resolve_seed_files(blueprint, bp_source, limits)
    errors, warnings = validate_semantics(blueprint, bp_source.line)
    if errors:
        raise BlueprintError(_by_line(errors), file)
    return attrs.evolve(blueprint, warnings=tuple(_by_line(warnings)), source=bp_source)


def _surrogate_issues(located: Located) -> list[BlueprintIssue]:
    """An issue per string (value or key) holding a UTF-16 surrogate, which a double-quoted
    YAML escape (``"\\ud800"``) can write but no UTF-8 encoding, request or save can hold."""
    issues: list[BlueprintIssue] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(located.data, ())]
    while stack:  # iterative: the limits scan bounded the depth, not the recursion
        value, path = stack.pop()
        texts: list[tuple[str, tuple[Any, ...]]] = []
        if isinstance(value, str):
            texts.append((value, path))
        elif isinstance(value, dict):
            for key, child in value.items():
                if isinstance(key, str):
                    texts.append((key, path))
                stack.append((child, (*path, key)))
        elif isinstance(value, list):
            stack.extend((child, (*path, i)) for i, child in enumerate(value))
        for text, where in texts:
            _fixed, repair = repair_text(text)
            if repair is not None:
                issues.append(
                    BlueprintIssue(
                        format_path(where),
                        located.line(where),
                        f"a UTF-16 surrogate escape at character {repair.position} has no UTF-8 "
                        "encoding, so no request or save can hold it; write the character "
                        "itself or its 8-digit escape (\\U0001F600, not \\ud83d\\ude00)",
                    )
                )
    return issues


def _structure(located: Located) -> tuple[Blueprint | None, list[BlueprintIssue]]:
    """The structured blueprint (or ``None``) and every structural issue: duplicate keys,
    strings no UTF-8 can hold, then what cattrs refused (unknown and missing keys, types,
    ranges, kinds)."""
    issues = [BlueprintIssue(format_path(i.path), i.line, i.message) for i in located.issues]
    issues.extend(_surrogate_issues(located))
    try:
        return structure_blueprint(located.data), issues
    except (ClassValidationError, IterableValidationError, ValueProblem) as exc:
        return None, [*issues, *structure_issues(exc, located)]


def _by_line(problems: list[Any]) -> list[Any]:
    """Problems in file order (stable; problems without a line last)."""
    return sorted(problems, key=lambda p: (p.line is None, p.line or 0))


def validate_blueprint(blueprint: Blueprint) -> list[BlueprintWarning]:
    """Re-run the semantic checks on a blueprint built or changed in code.

    Returns the warnings; raises :class:`BlueprintError` when there are errors. Lines are
    reported when the blueprint was loaded from YAML.
    """
    source = blueprint.source if isinstance(blueprint.source, BlueprintSource) else None
    errors, warnings = validate_semantics(blueprint, source.line if source else None)
    if errors:
        raise BlueprintError(errors, source.file if source else "<blueprint>")
    return warnings


class _Dumper(yaml.SafeDumper):
    """Safe dumper writing multi-line strings as literal blocks."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_blueprint(blueprint: Blueprint, *, inline_seeds: bool = False) -> str:
    """The blueprint as YAML text (keys in declaration order, defaults omitted).

    Loading the result gives an equal :class:`Blueprint`; seed files stay ``{file: path}``
    references (resolved against ``base_dir`` on load). With ``inline_seeds`` every seed file
    that was read is written as its text instead, so the YAML stands alone (e.g. in saved
    engine state); the reloaded blueprint then has literal seeds with the same text.
    """
    if inline_seeds:
        blueprint = attrs.evolve(
            blueprint,
            regions=tuple(
                attrs.evolve(r, seed=(SeedEntry(text=r.seed.text),))
                if isinstance(r.seed, SeedFile) and r.seed.text is not None
                else r
                for r in blueprint.regions
            ),
        )
    data = unstructure_spec(blueprint)
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
