"""``regio inspect STATE_FILE``: a saved engine's window as a per-region breakdown.

Like Claude Code's ``/context`` view: one bar per region (tokens used against its budget),
pending compactions, the last request's cache outcome per region, calibration and usage
totals. Reads the state written by :meth:`regio.engine.Engine.save` (JSON or msgpack).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from regio.console import stderr_console, stdout_console
from regio.errors import RuntimeStateError
from regio.persistence._load import read_state

from ._snapshot import EngineSnapshot, cache_outcomes, region_snapshots

if TYPE_CHECKING:
    import argparse

    from regio.content import Entry
    from regio.persistence._statefile import EngineState

__all__ = ["register", "render_snapshot", "snapshot_from_file"]

BAR_WIDTH = 12


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``inspect`` to the ``regio`` command."""
    parser = subparsers.add_parser(
        "inspect",
        help="show a saved engine state as a per-region window breakdown",
        description="Show a saved engine state (Engine.save) as a per-region breakdown.",
    )
    parser.add_argument(
        "state_file",
        help="file written by Engine.save (.json or .msgpack), or a stored session: "
        "sqlite:///sessions.db#SESSION or redis://host:6379/0#SESSION",
    )
    parser.set_defaults(handler=_run)


def snapshot_from_file(path: str) -> EngineSnapshot:
    """The :class:`EngineSnapshot` of a saved state, without needing its token counter (the
    saved entries carry their counts)."""
    return snapshot_from_state(read_state(path))


def snapshot_from_state(state: EngineState) -> EngineSnapshot:
    """The :class:`EngineSnapshot` of a decoded :class:`regio.persistence._statefile.EngineState`
    (from a file or a session store)."""
    from regio.compaction._flush import CompactionBook
    from regio.regions import Window
    from regio.session._usage import UsageLedger

    class _Saved:
        """Counts nothing new: a saved window is only read."""

        name = state.config.counter_name

        def count(self, text: str) -> int:
            return 0

        def count_entry(self, entry: Entry) -> int:
            return int(entry.tokens)

    window = Window.from_state(state.window, counter=_Saved())
    ledger = UsageLedger(prices=lambda provider, model: None)
    ledger.records = list(state.ledger)
    book: CompactionBook = state.book
    last = state.last_request
    cache, sizes = cache_outcomes(last, ledger.last)
    regions = region_snapshots(window, cache, sizes)
    config = state.config
    key = f"{config.provider}:{config.model or 'default'}"
    record = state.calibration.records.get(key)
    limit = window.max_tokens
    if config.context_window is not None:
        limit = min(limit, config.context_window - config.output_reserve)
    return EngineSnapshot(
        provider=config.provider,
        model=config.model,
        turn=window.turn,
        regions=regions,
        used_tokens=window.used_tokens,
        window_tokens=window.max_tokens,
        limit=limit,
        ceiling=limit,
        tools_tokens=0,
        calibrated_tokens=window.used_tokens,
        calibration_factor=record.factor if record else 1.0,
        transcript_records=len(state.transcript),
        usage=ledger.totals(),
        last_compaction=book.last,
        last_request_tokens=last.tokens if last is not None else 0,
        last_cache_read_tokens=ledger.last.cache_read_tokens if ledger.last else 0,
    )


def _bar(used: int, budget: int) -> str:
    share = 0.0 if budget <= 0 else min(1.0, used / budget)
    full = round(share * BAR_WIDTH)
    color = "green" if share < 0.7 else "yellow" if share < 0.9 else "red"
    return f"[{color}]{'█' * full}[/{color}]{'░' * (BAR_WIDTH - full)}"


def render_snapshot(snapshot: EngineSnapshot, console: Console | None = None) -> None:
    """Print ``snapshot`` as a table with one bar per region."""
    console = console or stdout_console()
    console.print(
        f"[bold]{snapshot.provider}:{snapshot.model}[/bold]  turn {snapshot.turn}  "
        f"{snapshot.used_tokens:,}/{snapshot.window_tokens:,} tokens "
        f"({snapshot.used_tokens / max(1, snapshot.window_tokens):.0%})  ceiling "
        f"{snapshot.ceiling:,}  calibration x{snapshot.calibration_factor:.3f}"
    )
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("region", no_wrap=True, min_width=8)
    table.add_column("kind", no_wrap=True)
    table.add_column("volatility", no_wrap=True)
    table.add_column("", no_wrap=True, min_width=BAR_WIDTH)
    for column in ("tokens", "budget", "entries", "pending"):
        table.add_column(column, justify="right", overflow="fold")
    table.add_column("cache", overflow="fold")
    for r in snapshot.regions:
        table.add_row(
            r.name,
            r.kind,
            r.volatility if r.laid_out in ("", r.volatility) else f"{r.volatility} -> {r.laid_out}",
            _bar(r.tokens, r.budget),
            f"{r.tokens:,}",
            f"{r.budget:,}",
            str(r.entries),
            f"{r.pending_tokens:,} ({len(r.pending_ids)})" if r.pending_ids else "",
            r.cache or "",
        )
    console.print(table)
    for r in snapshot.regions:
        if r.placement:
            console.print(f"{r.name}: {r.placement}", markup=False)
    u = snapshot.usage
    cost = f"${u.cost_usd:.4f}" if u.cost_usd is not None else "unpriced"
    console.print(
        f"usage: {u.calls} calls, {u.prompt_tokens:,} prompt tokens, "
        f"{u.cache_read_tokens:,} read from cache, {u.output_tokens:,} output, {cost}; "
        f"transcript {snapshot.transcript_records} records"
    )
    last = snapshot.last_compaction
    if last is not None:
        console.print(
            f"last compaction ({last.trigger}): {len(last.replaced_ids)} items replaced, "
            f"{last.tokens_before:,} -> {last.tokens_after:,} tokens, "
            f"{last.summarizer_calls} summarizer calls"
        )


def _snapshot(target: str) -> EngineSnapshot:
    if "://" not in target:
        return snapshot_from_file(target)
    from regio.persistence.store import load_state, open_store, split_url

    url, session = split_url(target)
    return snapshot_from_state(load_state(open_store(url, create=False), session)[0])


def _run(args: argparse.Namespace) -> int:
    from regio.persistence.store import SessionStoreError

    try:
        snapshot = _snapshot(args.state_file)
    except SessionStoreError as exc:
        stderr_console().print(f"[red]error:[/red] {exc}")
        return 2
    except FileNotFoundError:
        stderr_console().print(
            f"[red]error:[/red] {args.state_file}: no such state file "
            "(an engine writes one with Engine.save(path))"
        )
        return 2
    except RuntimeStateError as exc:
        stderr_console().print(f"[red]error:[/red] {exc}")
        return 2
    render_snapshot(snapshot)
    return 0
