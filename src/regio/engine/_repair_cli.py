"""``regio repair TARGET``: make a broken history valid (``Engine.repair``,
:mod:`regio.engine._repairs`).

``TARGET`` is

* a stored session, ``sqlite:///sessions.db#ID`` or ``redis://host:6379/0#ID``: loaded under
  the session's lease (waiting up to ``--wait`` seconds for another writer's), repaired and
  saved under it (to ``--output`` instead when given);
* a state file written by ``Engine.save``: repaired and written back atomically (to
  ``--output`` instead when given);
* a trace in any format ``regio traces import`` reads (Claude Code, Codex, OpenHands,
  SWE-agent, mini-swe-agent, tau-bench, OpenAI messages, regio JSONL): its history (the
  system prompt and the messages of run ``--trace``, default the first) is imported as
  recorded (:func:`regio.traces.builder.as_recorded`: no id renamed, no result moved, no
  call closed by the importer), admitted into a session of ``--blueprint`` (default
  :data:`DEFAULT_BLUEPRINT`: the system prompt pinned and a 190,000-token conversation) and
  repaired there; ``--output`` names where the session goes (a state file or ``URL#ID``;
  default ``<trace>.repaired.json`` beside the trace).

The importer's warnings first (``warning:`` lines: what it could not keep as recorded, such
as a result without a call id and no call to answer, kept as user text), then one line per
change (the :class:`regio.engine._history.HistoryRepaired` events: those of the admission,
which names call ids by :mod:`regio.callids`, then those of ``Engine.repair``), then the
results every request places right after their call (``placed:`` lines; the session keeps
them where they were recorded), then what was written. ``--dry-run`` writes nothing. Exit 0
when done (or there was nothing to repair), 2 for input that cannot be read or written (one
``error:`` line naming it).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import msgspec

from regio.console import stderr_console, stdout_console
from regio.errors import RegioError

if TYPE_CHECKING:
    from regio.engine import Engine
    from regio.events import Event
    from regio.persistence.store.lease import LeaseStore, SessionLease

__all__ = ["DEFAULT_BLUEPRINT", "RepairOutcome", "register", "repair_target"]


@attrs.frozen
class RepairOutcome:
    """What :func:`repair_target` did: ``changes`` (every
    :class:`regio.engine._history.HistoryRepaired`, in order), ``written`` (where the
    repaired session went; ``None``: nothing written) and ``warnings`` (the trace importer's
    :class:`regio.traces.errors.ImportIssue` s; empty for a stored session or a state file)."""

    changes: list[Any]
    written: str | None
    warnings: list[Any] = attrs.field(factory=list)
    #: results that every request places right after their call, which the stored history
    #: keeps where they were recorded (``results_moved`` events; not a change of the session)
    placed: list[Any] = attrs.field(factory=list)


#: The session a trace's history goes into when no ``--blueprint`` is given.
DEFAULT_BLUEPRINT = """
version: 1
name: repaired-history
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000,
        max_output_tokens: 8000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 10000, heading: false}
  - {name: conversation, kind: sliding_window, budget: 170000}
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``repair`` to the ``regio`` command."""
    parser = subparsers.add_parser(
        "repair",
        help="make a broken history valid (orphaned calls or results, reused call ids)",
        description=__doc__.split("\n\n", 1)[0].replace("\n", " ") if __doc__ else None,
    )
    parser.add_argument(
        "target",
        help="sqlite:///sessions.db#ID, redis://host:6379/0#ID, a state file (Engine.save) "
        "or a trace file of any imported format",
    )
    parser.add_argument(
        "--output",
        "-o",
        help="where the repaired session goes: a state file (.json / .msgpack) or URL#ID "
        "(default: back to TARGET; for a trace, <trace>.repaired.json)",
    )
    parser.add_argument("--blueprint", help="blueprint of the session a trace goes into")
    parser.add_argument("--trace", type=int, default=0, help="run of a multi-run trace file")
    parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait for a lease")
    parser.add_argument("--dry-run", action="store_true", help="report, write nothing")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    try:
        outcome = repair_target(
            args.target,
            output=args.output,
            blueprint=args.blueprint,
            trace=args.trace,
            wait=args.wait,
            dry_run=args.dry_run,
        )
    except (RegioError, OSError) as exc:
        stderr_console().print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        return 2
    console = stdout_console()
    for issue in outcome.warnings:
        console.print(f"warning: {issue}", markup=False, soft_wrap=True)
    changes, written = outcome.changes, outcome.written
    for change in changes:
        where = f" in message {change.message}" if change.message >= 0 else ""
        entry = f" (entry {change.entry})" if change.entry else ""
        call = f" {change.tool_use_id}" if change.tool_use_id else ""
        detail = f": {change.detail}" if change.detail else ""
        console.print(f"{change.action}{call}{where}{entry}{detail}", markup=False, soft_wrap=True)
    for move in outcome.placed:
        console.print(
            f"placed: the result of {move.tool_use_id} (entry {move.entry}) goes right after "
            "its call in every request",
            markup=False,
            soft_wrap=True,
        )
    if not changes:
        console.print("nothing to repair: the history is valid", markup=False)
    if written:
        console.print(f"written: {written}", markup=False)
    elif changes:
        console.print("dry run: nothing written", markup=False)
    return 0


def repair_target(
    target: str,
    *,
    output: str | None = None,
    blueprint: str | None = None,
    trace: int = 0,
    wait: float = 30.0,
    dry_run: bool = False,
) -> RepairOutcome:
    """Repair ``target`` (module doc); returns the :class:`RepairOutcome`. Raises
    :class:`regio.errors.RegioError` naming the input for anything that cannot be read or
    written."""
    from regio.engine import Engine

    if "://" in target:
        engine, changes, written = _repair_stored(target, output, wait, dry_run)
        return RepairOutcome(changes, written, placed=_placed(engine))
    path = Path(target)
    if not path.is_file():
        raise RegioError(f"{target}: no such file (a state file, a trace, or URL#ID)")
    if _is_state(path):
        engine = Engine.load(path)
        changes = engine.repair()
        out = output or (target if changes else None)
        written = None if dry_run or out is None else _write(engine, out, wait)
        return RepairOutcome(changes, written, placed=_placed(engine))
    engine, admitted, warnings = _from_trace(path, blueprint, trace)
    changes = [*admitted, *engine.repair()]
    out = output or str(path.with_name(f"{path.name}.repaired.json"))
    written = None if dry_run else _write(engine, out, wait)
    return RepairOutcome(changes, written, warnings, _placed(engine))


def _placed(engine: Engine) -> list[Any]:
    """The ``results_moved`` placements the repaired conversation of ``engine`` gets on every
    request (:func:`regio.engine._history.repair_history`), with their entry ids."""
    from regio.engine._history import repair_history

    conv = engine.window.conversation
    entries = list(conv.entries) if conv is not None else []
    plan = repair_history([e.message for e in entries])
    return [
        msgspec.structs.replace(c, entry=entries[c.message].id)
        for c in plan.changes
        if c.action == "results_moved" and c.message >= 0
    ]


def _is_state(path: Path) -> bool:
    """Whether ``path`` is an engine state file (else it is read as a trace)."""
    from regio.errors import RuntimeStateError
    from regio.persistence._load import read_state

    try:
        read_state(path)
    except RuntimeStateError:
        return False
    return True


def _repair_stored(
    target: str, output: str | None, wait: float, dry_run: bool
) -> tuple[Any, list[Any], str | None]:
    """A stored session repaired under its lease (module doc): the engine, its changes and
    where it was written."""
    from regio.engine import Engine
    from regio.persistence.store import open_store, split_url

    url, session = split_url(target)
    store = open_store(url, create=False)
    with _lease(store, session, wait) as lease:
        engine = Engine.load_from(store, session)
        changes = engine.repair()
        if dry_run or (not changes and output is None):
            return engine, changes, None
        if output is None:
            engine.save_to(store, session, lease=lease)
            return engine, changes, target
    return engine, changes, _write(engine, output, wait)


def _write(engine: Engine, output: str, wait: float) -> str:
    """Save ``engine`` to ``output``: a state file, or ``URL#ID`` (a new session there, or
    the session it was loaded as, under its lease)."""
    if "://" not in output:
        engine.save(output)
        return output
    from regio.persistence.store import open_store, split_url

    url, session = split_url(output)
    store = open_store(url)
    mark = engine.store_mark
    create = mark is None or (mark.store, mark.session_id) != (store.url, session)
    with _lease(store, session, wait) as lease:
        engine.save_to(store, session, lease=lease, create=create)
    return output


def _lease(store: LeaseStore, session: str, wait: float) -> SessionLease:
    """The lease on ``session``, waiting up to ``wait`` seconds; the error of a lease still
    held says how to wait longer here (``--wait``)."""
    from regio.persistence.store.lease import acquire

    return acquire(store, session, wait=wait, advice="wait longer (--wait SECONDS)")


def _from_trace(path: Path, blueprint: str | None, index: int) -> tuple[Any, list[Any], list[Any]]:
    """An engine of ``blueprint`` holding the history of run ``index`` of the trace at
    ``path`` as recorded (module doc), the changes its admission made (call ids named by
    :mod:`regio.callids`) and the importer's warnings."""
    from regio.engine import Engine
    from regio.engine._history import HistoryRepaired
    from regio.regions import WriteResult
    from regio.traces.builder import as_recorded
    from regio.traces.detect import import_file
    from regio.traces.format import SystemPrompt, UserMessage, event_message

    with as_recorded():
        result = import_file(path)
    if not 0 <= index < len(result.traces):
        raise RegioError(
            f"{path}: --trace {index} is not one of its {len(result.traces)} runs "
            f"(0 to {len(result.traces) - 1})"
        )
    run = result.traces[index]
    engine = Engine.from_blueprint(blueprint or DEFAULT_BLUEPRINT)
    admitted: list[Any] = []

    def collect(event: Event) -> None:
        if isinstance(event, HistoryRepaired):
            admitted.append(event)

    stop = engine.subscribe(collect)
    pinned = next((r.name for r in engine.window.regions if r.kind == "pinned"), None)
    for event in run.events:
        if isinstance(event, SystemPrompt) and pinned is not None and event.text:
            if not isinstance(engine.write(pinned, event.text), WriteResult):
                raise RegioError(
                    f"{path}: the system prompt does not fit region {pinned!r} of the "
                    "blueprint; pass a --blueprint with a larger pinned region"
                )
            continue
        message = event_message(event)
        if message is None:
            continue
        observation = isinstance(event, UserMessage) and event.observation
        engine.add_message(message, observation=observation)
    stop()
    return engine, admitted, list(result.issues)
