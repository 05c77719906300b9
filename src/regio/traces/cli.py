"""``regio traces import`` and ``regio traces show``.

* ``regio traces import SRC... [--format auto|claude-code|codex|openhands|swe-agent|...]``
  ``[--out DIR] [-v]`` imports source files (directories are searched recursively), prints one
  line per trace (id, messages, tool calls, issues, model calls, and the recorded usage when
  the source has it: calls with usage, prompt / cached / written tokens, cache hit rate) and,
  with ``--out``, writes one regio JSONL file per trace. ``-v`` also prints every issue. A file
  that cannot be imported is one line ``error: <file>: <place>: <why>`` on stderr (never a
  traceback) and the other files are still imported. Exit 0 when every file imported, 2 when
  any failed or nothing was imported.
* ``regio traces synth --calls N --seed S [--shape SHAPE] --out DIR`` writes one generated
  session (:func:`regio.traces.synth.synthesize`; ``--shape`` one of
  :data:`regio.traces.synthshapes.SHAPES`, default ``coding``) as
  ``DIR/synth__<shape>-N-seedS.jsonl`` (or to ``--out`` itself when it ends ``.jsonl``);
  ``--like SRC...`` measures the profile from those traces instead of the bundled coding runs.
  Exit 2 for ``--calls`` below 1 or a ``--like`` source that does not import.
* ``regio traces show TRACE.jsonl`` prints a summary: events by type, messages, tool calls,
  model calls, duration, whether the trace is append-only, and consistency problems. Exit 2
  for a file that is not a regio trace.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from regio.traces.detect import FORMATS, expand_sources, import_file
from regio.traces.errors import ImportIssue, TraceError, TraceFormatError
from regio.traces.format import Trace
from regio.traces.jsonl import read_trace, write_trace
from regio.traces.usage import recorded_usage, usage_totals

__all__ = ["register", "trace_filename"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``traces`` command (``import``, ``show``) to the ``regio`` parser."""
    parser = subparsers.add_parser(
        "traces",
        help="import agent runs into regio traces and inspect them",
        description="Import public agent-run formats into regio's JSONL trace format.",
    )
    sub = parser.add_subparsers(dest="traces_command", metavar="ACTION")
    parser.set_defaults(handler=lambda args: _usage(parser))

    imp = sub.add_parser(
        "import",
        help="import Claude Code, Codex CLI, OpenHands, SWE-agent, mini-swe-agent, tau-bench or "
        "OpenAI-format runs",
    )
    imp.add_argument("sources", nargs="+", metavar="SRC", help="files or directories")
    imp.add_argument(
        "--format",
        default="auto",
        choices=("auto", *FORMATS),
        help="source format (default: auto-detect per file)",
    )
    imp.add_argument(
        "--out",
        type=Path,
        default=None,
        help="directory to write one .jsonl per trace (default: report only)",
    )
    imp.add_argument("-v", "--verbose", action="store_true", help="print every issue")
    imp.set_defaults(handler=_cmd_import)

    from regio.traces.synthshapes import SHAPES

    synth = sub.add_parser(
        "synth", help="generate a seeded long session shaped by the bundled real runs"
    )
    synth.add_argument("--calls", type=int, default=1000, help="model calls (default 1000)")
    synth.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    synth.add_argument(
        "--shape",
        default="coding",
        choices=tuple(SHAPES),
        help="session family (default coding): "
        + "; ".join(f"{k}: {v.summary}" for k, v in SHAPES.items()).replace("%", "%%"),
    )
    synth.add_argument(
        "--out", type=Path, required=True, help="directory (or .jsonl file) to write the trace to"
    )
    synth.add_argument(
        "--like",
        nargs="+",
        metavar="SRC",
        default=None,
        help="measure the profile from these traces (any importable format) instead of the "
        "bundled coding runs",
    )
    synth.set_defaults(handler=_cmd_synth)

    show = sub.add_parser("show", help="summarize a regio trace file")
    show.add_argument("trace", type=Path, metavar="TRACE.jsonl")
    show.set_defaults(handler=_cmd_show)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def trace_filename(trace: Trace) -> str:
    """File name for a trace: its id with ``/`` → ``__`` and ``#`` → ``-``, plus ``.jsonl``."""
    safe = trace.id.replace("/", "__").replace("#", "-").replace("\\", "__")
    return f"{safe}.jsonl"


def _issues_of(trace: Trace, issues: tuple[ImportIssue, ...], multi: bool) -> list[ImportIssue]:
    if not multi:
        return list(issues)
    return [i for i in issues if i.record == trace.header.record]


def _usage_note(trace: Trace) -> str:
    totals = usage_totals(recorded_usage(trace))
    if not totals.recorded:
        return ""
    return (
        f"  usage={totals.recorded}/{totals.calls}  prompt={totals.prompt_tokens}  "
        f"cached={totals.cache_read_tokens}  written={totals.cache_write_tokens}  "
        f"hit={totals.hit_rate:.1%}"
    )


def _import_one(path: Path, args: argparse.Namespace) -> int:
    """Import and report one file; returns the number of traces (raises TraceError, OSError)."""
    result = import_file(path, args.format)
    multi = len(result.traces) > 1
    for trace in result.traces:
        own = _issues_of(trace, result.issues, multi)
        line = (
            f"{trace.id}  [{result.format}]  messages={len(trace.messages())}  "
            f"tool_calls={len(trace.tool_calls())}  issues={len(own)}  "
            f"calls={len(trace.steps())}{_usage_note(trace)}"
        )
        if args.out is not None:
            target = write_trace(trace, args.out / trace_filename(trace))
            line += f"  -> {target}"
        print(line)
    if args.verbose:
        for issue in result.issues:
            print(f"  {issue}")
    return len(result.traces)


def _cmd_import(args: argparse.Namespace) -> int:
    try:
        paths = expand_sources(args.sources)
    except TraceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    imported = failed = 0
    for path in paths:
        try:
            imported += _import_one(path, args)
        except TraceError as exc:
            print(f"error: {exc}", file=sys.stderr)
            failed += 1
        except OSError as exc:
            where = exc.filename or path
            print(f"error: {where}: {exc.strerror or exc}", file=sys.stderr)
            failed += 1
    if imported == 0:
        print("error: nothing was imported", file=sys.stderr)
        return 2
    return 2 if failed else 0


def _cmd_synth(args: argparse.Namespace) -> int:
    from regio.traces.synth import CODING_PROFILE, synthesize
    from regio.traces.synthprofile import profile_from_traces

    if args.calls < 1:
        print(f"error: --calls must be at least 1, got {args.calls}", file=sys.stderr)
        return 2
    profile = CODING_PROFILE
    if args.like:
        try:
            sources = [t for p in expand_sources(args.like) for t in import_file(p).traces]
            profile = profile_from_traces(sources)
        except TraceError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except ValueError as exc:
            print(f"error: --like: {exc}", file=sys.stderr)
            return 2
    trace = synthesize(args.calls, args.seed, profile=profile, shape=args.shape)
    out: Path = args.out
    target = out if out.suffix == ".jsonl" else out / trace_filename(trace)
    try:
        written = write_trace(trace, target)
    except OSError as exc:
        print(f"error: {target}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    counts = trace.counts()
    print(
        f"{trace.id}  calls={args.calls}  episodes={trace.header.meta['episodes']}  "
        f"tool_results={counts.get('tool_results', 0)}  -> {written}"
    )
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    try:
        trace = read_trace(args.trace)
    except TraceFormatError as exc:
        print(f"error: {exc} (to convert a source run, use `regio traces import`)", file=sys.stderr)
        return 2
    except FileNotFoundError:
        print(
            f"error: {args.trace}: no such file (`regio traces import SRC --out DIR` writes "
            "traces)",
            file=sys.stderr,
        )
        return 2
    except OSError as exc:
        print(f"error: {args.trace}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    header = trace.header
    print(f"trace      {header.id}")
    print(f"source     {header.source_format}  {header.source_file}")
    if header.agent or header.model:
        print(f"agent      {header.agent or '-'}  model {header.model or '-'}")
    counts = "  ".join(f"{k}={v}" for k, v in trace.counts().items())
    print(f"events     {len(trace.events)}  ({counts})")
    print(f"messages   {len(trace.messages())}")
    print(f"tool calls {len(trace.tool_calls())}")
    print(f"model calls {len(trace.steps())}")
    note = _usage_note(trace)
    if note:
        print(f"recorded  {note.strip()}")
    print(f"duration   {trace.duration:.3f} s")
    print(f"append-only {'yes' if trace.is_append_only() else 'no'}")
    problems = trace.problems()
    print(f"problems   {len(problems)}")
    for problem in problems:
        print(f"  {problem}")
    return 0
