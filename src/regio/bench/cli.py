"""``regio bench`` and ``regio demo``.

``regio bench --trace PATH... --blueprint PATH [--layouts a,b] [--cache m1,m2]
[--model provider:model [--summarizer-model NAME]] [--window-tokens N] [--canaries]
[--json OUT] [--plot OUT.png]`` replays traces (any format :func:`regio.traces.import_file`
reads) under one blueprint and prints per-group and total tables. ``--model`` replays the
blueprint declared for another model (:func:`regio.bench.retarget.retarget_blueprint`) and,
without ``--cache``, bills it at that model. ``regio demo`` benches the bundled traces
(``examples/traces``) with the example blueprints (``coding-agent`` for SWE-agent and
mini-swe-agent, ``support-agent`` for tau-bench) under the default cache models
``anthropic:claude-sonnet-4-6`` and ``openai:gpt-5``
(:data:`regio.bench.run.DEFAULT_CACHE_MODELS`; ``--cache`` picks others, e.g.
``openai:gpt-4o``), writing ``out/demo.json`` and, with matplotlib, ``out/demo.png``,
then each group under pressure (:data:`DEMO_WINDOW_TOKENS`, canaries planted) to
``out/demo-pressure-<blueprint>.json`` / ``.png``, and prints both kinds of table.
``--window-tokens N`` runs any bench under pressure (the ``recorded`` row stays the requests
as sent: the window is not applied to them); ``--canaries`` measures retention.
Exit status: 0 success, 2 invalid input (unknown layout or cache model, unreadable trace or
blueprint), 1 other errors.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress

from regio.bench.output import plot_available, print_report, write_plot
from regio.bench.pressure import scale_blueprint
from regio.bench.replay import ALL_LAYOUTS, OPT_IN
from regio.bench.report import BenchReport, write_report
from regio.bench.retarget import retarget_blueprint
from regio.bench.run import DEFAULT_CACHE_MODELS, check_cache_models, run_bench
from regio.cache.types import CacheError
from regio.console import stderr_console, stdout_console
from regio.traces.format import Trace

if TYPE_CHECKING:
    from regio.blueprint import Blueprint

__all__ = [
    "DEMO_GROUPS",
    "DEMO_WINDOW_TOKENS",
    "examples_dir",
    "main_bench",
    "main_demo",
    "register",
]

#: Window of the demo's pressure runs per example blueprint (tokens): small enough that the
#: bundled traces trim, evict or compact, large enough for the pinned instructions.
DEMO_WINDOW_TOKENS: dict[str, int] = {"coding-agent.yaml": 12288, "support-agent.yaml": 6144}

#: Bundled trace folder -> example blueprint used by ``regio demo``.
DEMO_GROUPS: dict[str, str] = {
    "swe-agent": "coding-agent.yaml",
    "mini-swe-agent": "coding-agent.yaml",
    "tau-bench": "support-agent.yaml",
}


def examples_dir(start: Path | None = None) -> Path:
    """``<repo>/examples`` found by walking up from this module (or ``start``); raises
    ``FileNotFoundError`` naming where it looked and the fix."""
    here = (start or Path(__file__)).resolve()
    for parent in here.parents:
        candidate = parent / "examples"
        if (candidate / "traces").is_dir() and (candidate / "blueprints").is_dir():
            return candidate
    raise FileNotFoundError(
        f"examples/ (with traces/ and blueprints/) not found above {here.parent}: the demo "
        "data ships with the source repository, not the installed package; run from a clone"
    )


def _names(value: str) -> list[str]:
    return [x.strip() for x in value.split(",") if x.strip()]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bench`` and ``demo`` to the ``regio`` command."""
    bench = subparsers.add_parser(
        "bench",
        help="replay traces through every layout and cache model; report hit rate and cost",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench.add_argument(
        "--trace",
        nargs="+",
        required=True,
        metavar="PATH",
        help="trace files or folders (SWE-agent, mini-swe-agent, tau-bench, "
        "OpenAI messages, regio JSONL)",
    )
    bench.add_argument("--blueprint", required=True, metavar="PATH", help="blueprint YAML")
    bench.add_argument(
        "--layouts",
        default=",".join(ALL_LAYOUTS),
        help=f"comma-separated layouts and baselines (default {','.join(ALL_LAYOUTS)}; "
        f"also: {','.join(OPT_IN)})",
    )
    bench.add_argument(
        "--cache",
        help="comma-separated cache models provider[:model] (default "
        f"{','.join(DEFAULT_CACHE_MODELS)}, or the --model; others e.g. "
        "openai:gpt-4o,vllm,llamacpp,oracle)",
    )
    bench.add_argument(
        "--model",
        metavar="PROVIDER:MODEL",
        help="replay the blueprint declared for this model (model, cache profile; e.g. "
        "openai:gpt-5) and bill it there unless --cache names others",
    )
    bench.add_argument(
        "--summarizer-model",
        metavar="NAME",
        help="with --model: the model of that provider that writes the summaries (e.g. gpt-5-mini)",
    )
    bench.add_argument(
        "--window-tokens",
        type=int,
        metavar="N",
        help="run under pressure: scale the blueprint's window and budgets to N tokens "
        "(the recorded row stays as sent: the window is not applied to it)",
    )
    bench.add_argument(
        "--canaries",
        action="store_true",
        help="plant canaries and probe the trace's own facts; report retention",
    )
    bench.add_argument("--json", metavar="OUT", help="write the JSON report here")
    bench.add_argument("--plot", metavar="OUT.png", help="write the cumulative hit-rate plot")
    bench.add_argument("--per-trace", action="store_true", help="also print one table per trace")
    bench.set_defaults(handler=main_bench)
    demo = subparsers.add_parser(
        "demo",
        help="bench the bundled real agent traces (offline, under a minute)",
        description="Run `regio bench` on examples/traces with the example blueprints.",
    )
    demo.add_argument("--out", default="out", metavar="DIR", help="folder for demo.json / demo.png")
    demo.add_argument(
        "--cache",
        default=",".join(DEFAULT_CACHE_MODELS),
        help=f"comma-separated cache models (default {','.join(DEFAULT_CACHE_MODELS)})",
    )
    demo.set_defaults(handler=main_demo)


def _load_traces(paths: Sequence[str], skipped: list[str]) -> list[Trace]:
    """Traces of every file under ``paths``; a file that cannot be read or parsed is added
    to ``skipped`` with the reason and left out."""
    from regio.traces.detect import expand_sources, import_file
    from regio.traces.errors import TraceFormatError

    traces: list[Trace] = []
    for path in expand_sources([Path(p) for p in paths]):
        try:
            traces.extend(import_file(path).traces)
        except (TraceFormatError, OSError, ValueError, UnicodeDecodeError) as exc:
            reason = str(exc)  # a format error already names the file
            skipped.append(reason if reason.startswith(str(path)) else f"{path}: {reason}")
    return traces


def _run(
    console: Console,
    jobs: list[tuple[Trace, Any]],
    layouts: list[str],
    caches: list[str],
    **options: Any,
) -> BenchReport:
    if console.is_terminal and len(jobs) > 1:
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task("replaying traces", total=len(jobs))
            return run_bench(
                jobs,
                layouts=layouts,
                cache_models=caches,
                progress=lambda _id: progress.advance(task),
                **options,
            )
    return run_bench(jobs, layouts=layouts, cache_models=caches, **options)


def _finish(
    console: Console,
    report: BenchReport,
    json_out: str | None,
    plot_out: str | None,
    *,
    show: bool = True,
) -> None:
    if show:
        print_report(report, console)
    if json_out:
        console.print(f"wrote {write_report(report, json_out)}")
    if plot_out:
        if plot_available():
            console.print(f"wrote {write_plot(report, plot_out)}")
        else:
            console.print("[yellow]note:[/] matplotlib is not installed (extra 'bench'); no plot")


def _check_caches(caches: Sequence[str]) -> None:
    """Refuse an empty ``--cache`` list (``ValueError``) or a name without a cache rule
    (:func:`check_cache_models`)."""
    if not caches:
        raise ValueError(
            f"--cache: give at least one provider[:model], e.g. --cache {DEFAULT_CACHE_MODELS[0]}"
        )
    check_cache_models(caches)


def _error(exc: BaseException) -> None:
    """Print ``exc`` as the command's error, its text as written (no markup, no emoji codes:
    ``anthropc:x:`` stays text)."""
    stderr_console().print(f"[red]error:[/] {escape(str(exc))}", emoji=False)


def _declared(blueprint: Blueprint) -> tuple[str]:
    """The report note of a blueprint retargeted with ``--model``."""
    named = blueprint.summary_model
    summaries = f"summaries by {named[1]}" if named else "summaries by the agent's model"
    return (
        f"blueprint {blueprint.name!r} replayed as declared for "
        f"{blueprint.model.provider}:{blueprint.model.name} (--model: model and cache "
        f"profile; {summaries})",
    )


def main_bench(args: argparse.Namespace) -> int:
    """Handler of ``regio bench``."""
    from regio.blueprint import BlueprintError, load_blueprint
    from regio.traces.errors import TraceFormatError

    console = stdout_console()
    layouts = _names(args.layouts)
    default = ",".join(DEFAULT_CACHE_MODELS)
    bad = [x for x in layouts if x not in ALL_LAYOUTS and x not in OPT_IN]
    try:
        if bad or not layouts:
            known = ", ".join((*ALL_LAYOUTS, *OPT_IN))
            raise ValueError(f"--layouts: unknown {bad}; use names from {known}")
        if args.summarizer_model is not None and args.model is None:
            raise ValueError("--summarizer-model: give it with --model provider:model")
        blueprint = load_blueprint(Path(args.blueprint))
        if args.model is not None:
            blueprint = retarget_blueprint(blueprint, args.model, args.summarizer_model)
            default = f"{blueprint.model.provider}:{blueprint.model.name}"
        caches = _names(args.cache if args.cache is not None else default)
        _check_caches(caches)
        if args.window_tokens is not None:
            scale_blueprint(blueprint, args.window_tokens)
        skipped: list[str] = []
        traces = _load_traces(args.trace, skipped)
        if not traces:
            why = "; ".join(skipped) or "no trace files there"
            raise ValueError(f"--trace {' '.join(args.trace)}: no traces found: {why}")
    except (ValueError, CacheError, BlueprintError, TraceFormatError, OSError) as exc:
        _error(exc)
        return 2
    report = _run(
        console,
        [(t, blueprint) for t in traces],
        layouts,
        caches,
        window_tokens=args.window_tokens,
        canaries=args.canaries,
        skipped=skipped,
        notes=_declared(blueprint) if args.model is not None else (),
    )
    _finish(console, report, args.json, args.plot)
    return 0


def main_demo(args: argparse.Namespace) -> int:
    """Handler of ``regio demo``."""
    from regio.blueprint import load_blueprint

    console = stdout_console()
    try:
        root = examples_dir()
        caches = _names(args.cache)
        _check_caches(caches)
    except (FileNotFoundError, CacheError, ValueError) as exc:
        _error(exc)
        return 2
    jobs: list[tuple[Trace, Any]] = []
    by_file: dict[str, list[tuple[Trace, Any]]] = {}
    skipped: list[str] = []
    for folder, blueprint_file in DEMO_GROUPS.items():
        path = root / "traces" / folder
        if not path.is_dir():
            continue
        blueprint = load_blueprint(root / "blueprints" / blueprint_file)
        found = [(t, blueprint) for t in _load_traces([str(path)], skipped)]
        jobs.extend(found)
        by_file.setdefault(blueprint_file, []).extend(found)
    if not jobs:
        stderr_console().print(f"[red]error:[/] no bundled traces under {root / 'traces'}")
        return 2
    out = Path(args.out)
    report = _run(console, jobs, list(ALL_LAYOUTS), caches, skipped=skipped)
    _finish(console, report, str(out / "demo.json"), str(out / "demo.png"))
    for blueprint_file, group in by_file.items():
        window = DEMO_WINDOW_TOKENS[blueprint_file]
        stem = Path(blueprint_file).stem
        console.rule(f"under pressure: {stem} at a {window:,}-token window, canaries planted")
        pressure = _run(
            console, group, list(ALL_LAYOUTS), caches, window_tokens=window, canaries=True
        )
        name = f"demo-pressure-{stem}"
        _finish(console, pressure, str(out / f"{name}.json"), str(out / f"{name}.png"))
    return 0


if __name__ == "__main__":  # pragma: no cover (``python -m regio.bench.cli``: ``regio demo``)
    _parser = argparse.ArgumentParser(prog="regio")
    register(_parser.add_subparsers(dest="command"))
    _args = _parser.parse_args(["demo"])
    sys.exit(_args.handler(_args))
