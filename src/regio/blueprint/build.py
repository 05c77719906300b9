"""Building the runtime :class:`regio.regions.Window` from a blueprint, seeds included."""

from __future__ import annotations

from typing import Any

from regio.blueprint.errors import BlueprintError, BlueprintIssue
from regio.blueprint.source import format_path
from regio.blueprint.spec import (
    Blueprint,
    ChecklistSpec,
    RegionSpec,
    SeedEntry,
    SeedFile,
    SlidingWindowSpec,
)
from regio.blueprint.writers import replacing_writers
from regio.content import Message, Text
from regio.errors import (
    CustomHooksNotAllowedError,
    RegionConfigError,
    RegionFullError,
    WindowConfigError,
)
from regio.providers.registry import chat_format_for
from regio.regions import Refusal, Region, Window, make_region
from regio.tokens import TokenCounter, get_counter

__all__ = ["build_window", "region_options"]


def region_options(spec: RegionSpec) -> dict[str, Any]:
    """The keyword options of :func:`regio.regions.make_region` for one region spec (each
    kind's :meth:`~regio.blueprint.regionspec.RegionSpec.region_options`)."""
    return spec.region_options()


def _seed_entries(spec: RegionSpec) -> list[tuple[tuple[str | int, ...], SeedEntry]]:
    if spec.seed is None:
        return []
    if isinstance(spec.seed, SeedFile):
        return [(("seed", "file"), SeedEntry(text=spec.seed.text or ""))]
    if len(spec.seed) == 1:
        return [(("seed",), spec.seed[0])]
    return [(("seed", i), entry) for i, entry in enumerate(spec.seed)]


def _issue(bp: Blueprint, path: tuple[str | int, ...], message: str) -> BlueprintError:
    source = bp.source
    line = source.line(path) if source is not None else None
    file = source.file if source is not None else "<blueprint>"
    return BlueprintError([BlueprintIssue(format_path(path), line, message)], file)


def _seed(window: Window, region: Region, spec: RegionSpec, bp: Blueprint, index: int) -> None:
    for sub, entry in _seed_entries(spec):
        path = ("regions", index, *sub)
        if not entry.text.strip():
            continue
        try:
            if isinstance(spec, SlidingWindowSpec):
                message = Message(entry.role or "user", (Text(entry.text),))
                result = window.add_message(message, region=region, strict=True)
            elif isinstance(spec, ChecklistSpec):
                result = window.todo_add(region, entry.text)
                if isinstance(result, Refusal):
                    raise result.error()
            else:
                result = window.write(region, entry.text, key=entry.key, strict=True)
        except RegionFullError as exc:
            raise _issue(
                bp,
                path,
                f"the seed does not fit region {spec.name!r}: {exc}; raise the budget or "
                "shorten the seed",
            ) from exc
        del result


def build_window(
    blueprint: Blueprint, *, counter: TokenCounter | None = None, allow_custom_hooks: bool = False
) -> Window:
    """A fresh :class:`regio.regions.Window` for ``blueprint``, with every seed written.

    * regions are made with :func:`regio.regions.make_region` in declaration order, budgets
      resolved against :attr:`Blueprint.window_tokens` (the window's ``max_tokens``); a region
      whose declared writer replaces what it stored gets it as ``replacing_writer``
      (:func:`regio.blueprint.writers.replacing_writers`);
    * ``counter`` is a :class:`regio.tokens.TokenCounter`; default: ``blueprint.tokenizer``
      with the provider's chat format (:func:`regio.providers.chat_format_for`);
    * ``custom`` regions load their hooks only when ``allow_custom_hooks`` is true, otherwise
      :class:`regio.errors.CustomHooksNotAllowedError` is raised.

    Raises :class:`BlueprintError` (naming ``regions[i]`` or ``regions[i].seed`` and its line)
    when a region option is refused or a seed does not fit its region.
    """
    if counter is None:
        counter = get_counter(
            blueprint.tokenizer,
            chat_format=chat_format_for(blueprint.model.provider, blueprint.model.name),
            model=blueprint.model.name,
        )
    regions: list[Region] = []
    writers = replacing_writers(blueprint.regions, blueprint.relief)
    for index, spec in enumerate(blueprint.regions):
        options = region_options(spec)
        if spec.name in writers:
            options["replacing_writer"] = writers[spec.name]
        try:
            regions.append(make_region(spec.kind, allow_custom_hooks=allow_custom_hooks, **options))
        except CustomHooksNotAllowedError:
            raise
        except RegionConfigError as exc:
            raise _issue(blueprint, ("regions", index), str(exc)) from exc
    try:
        window = Window(
            regions=regions,
            max_tokens=blueprint.window_tokens,
            counter=counter,
            high_water=blueprint.window.high_water,
        )
    except (RegionConfigError, WindowConfigError) as exc:
        raise _issue(blueprint, ("regions",), str(exc)) from exc
    for index, (region, spec) in enumerate(zip(regions, blueprint.regions, strict=True)):
        _seed(window, region, spec, blueprint, index)
    return window
