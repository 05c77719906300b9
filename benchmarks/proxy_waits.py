"""Where the proxy's added time went, from a ``--request-log`` (JSONL): early against late
requests of each session, and the slowest requests overall.

Usage::

    python benchmarks/proxy_waits.py requests.jsonl [--requests N]

Reads the lines of managed requests that carry the breakdown of ``added_ms``
(:mod:`regio.proxy.requestlog`: ``read_ms`` ... ``other_ms``, which sum to ``added_ms``, and
the parts of parts ``thread_cpu_ms``, ``commit_cpu_ms``, ``store_lock_ms``, plus ``body_ms``
outside ``added_ms``). ``--requests N`` keeps only the sessions of exactly ``N`` requests (the
steady-load benchmark's measured sessions and the ones before them have ``REGIO_BENCH_STEPS``).

Prints, in milliseconds, the mean, p50 and p99 of every field for three groups: the first 10%
and the last 10% of each session's requests (by their order within the session: a session's
requests hold its lease one after the other, so its lines are in that order in the log), and
the slowest 1% of all requests by ``added_ms``; then how the slowest 1% cluster in time: how
many 1-second windows (of ``released``, when each gave its lease back) hold them and how many
of them share a window with another one. Not a test: a reading aid for the steady-load
benchmark (``benchmarks/test_bench_proxy_stationary.py``).
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from regio.proxy.requestlog import ADDED_PARTS, WAIT_DETAILS

#: What the report shows: ``added_ms``, its parts (which sum to it) and their parts.
FIELDS = ("added_ms", *ADDED_PARTS, *WAIT_DETAILS)


def read_log(path: Path, requests: int | None = None) -> list[dict[str, Any]]:
    """The lines of ``path`` that carry the breakdown (a session's request), in file order;
    ``requests``: only the sessions of exactly that many such lines."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("session") is not None and "other_ms" in r]
    if requests is None:
        return rows
    sizes = Counter(r["session"] for r in rows)
    return [r for r in rows if sizes[r["session"]] == requests]


def split(rows: Sequence[dict[str, Any]], fraction: float = 0.1) -> dict[str, list[dict[str, Any]]]:
    """``rows`` (log lines in file order) as the groups ``first`` and ``last`` (the first and
    the last ``ceil(fraction * n)`` requests of each session of ``n``, by order within the
    session) and ``slowest`` (the ``ceil(fraction / 10 * len(rows))`` of largest ``added_ms``)."""
    by_session: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_session.setdefault(row["session"], []).append(row)
    first: list[dict[str, Any]] = []
    last: list[dict[str, Any]] = []
    for lines in by_session.values():
        k = math.ceil(fraction * len(lines))
        first += lines[:k]
        last += lines[len(lines) - k :]
    count = math.ceil(fraction / 10 * len(rows))
    slowest = sorted(rows, key=lambda r: r["added_ms"], reverse=True)[:count]
    return {"first": first, "last": last, "slowest": slowest}


def _quantile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile of ``values`` (0.0 when empty)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per field (:data:`FIELDS`; a line without it counts 0): ``mean``, ``p50``, ``p99``
    (nearest rank), milliseconds; all 0.0 for no rows."""
    out: dict[str, dict[str, float]] = {}
    for field in FIELDS:
        values = [float(r.get(field, 0.0)) for r in rows]
        mean = sum(values) / len(values) if values else 0.0
        out[field] = {"mean": mean, "p50": _quantile(values, 0.5), "p99": _quantile(values, 0.99)}
    return out


def clustering(rows: Sequence[dict[str, Any]]) -> tuple[int, int, int]:
    """``(windows, shared, largest)`` for ``rows`` (the slowest requests): how many 1-second
    windows of ``released`` hold them, how many rows share their window with another row, and
    the most rows in one window."""
    windows = Counter(int(r.get("released", 0.0)) for r in rows)
    shared = sum(n for n in windows.values() if n > 1)
    return len(windows), shared, max(windows.values(), default=0)


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The printed report of ``rows`` (module doc)."""
    groups = split(rows)
    stats = {name: summarize(group) for name, group in groups.items()}
    head = f"{'ms':<20}" + "".join(
        f"{f'{name} ({len(groups[name])})':>27}" for name in ("first", "last", "slowest")
    )
    sub = f"{'':<20}" + f"{'mean':>9}{'p50':>9}{'p99':>9}" * 3
    lines = [head, sub]
    for field in FIELDS:
        cells = "".join(
            f"{stats[g][field][s]:>9.2f}"
            for g in ("first", "last", "slowest")
            for s in stats[g][field]
        )
        label = field if field == "added_ms" or field in ADDED_PARTS else f"  ({field})"
        lines.append(f"{label:<20}{cells}")
    windows, shared, largest = clustering(groups["slowest"])
    lines.append(
        f"slowest {len(groups['slowest'])}: in {windows} 1-s windows; {shared} share a window "
        f"with another; at most {largest} in one"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", type=Path, help="a --request-log file (JSONL)")
    parser.add_argument("--requests", type=int, help="only sessions of exactly N requests")
    args = parser.parse_args(argv)
    rows = read_log(args.log, args.requests)
    if not rows:
        only = "" if args.requests is None else f" in sessions of {args.requests} requests"
        raise SystemExit(f"{args.log}: no request lines with the added_ms breakdown{only}")
    print(table(rows))


if __name__ == "__main__":
    main()
