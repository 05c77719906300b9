"""The real agent runs bundled with the repository (``examples/traces``).

``examples/`` is not part of the installed package, so it is found by walking up from this
module's file to the first directory that holds ``examples/traces`` (the repository root in a
source checkout or an editable install). Set ``REGIO_TRACES_DIR`` to use another copy.
"""

from __future__ import annotations

import os
from pathlib import Path

from regio.traces.detect import ImportResult, expand_sources, import_file
from regio.traces.errors import TraceFormatError

__all__ = ["bundled_trace_paths", "bundled_traces_dir", "load_bundled_traces"]

_ENV = "REGIO_TRACES_DIR"


def bundled_traces_dir() -> Path:
    """The directory of the bundled traces.

    ``$REGIO_TRACES_DIR`` when set, else ``<repo>/examples/traces`` found by walking up from
    this file. Raises :class:`FileNotFoundError` naming the places searched and the fix.
    """
    override = os.environ.get(_ENV)
    if override:
        path = Path(override)
        if path.is_dir():
            return path
        raise FileNotFoundError(f"{_ENV}={override} is not a directory")
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "examples" / "traces"
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"examples/traces not found above {here.parent}: the bundled traces ship with the "
        f"source repository, not the installed package; run from a clone or set {_ENV}"
    )


def bundled_trace_paths() -> list[Path]:
    """Every bundled source file (sorted; licence and provenance files excluded)."""
    return expand_sources([bundled_traces_dir()])


def load_bundled_traces() -> list[ImportResult]:
    """Import every bundled file with format auto-detection, one :class:`ImportResult` each.
    Raises :class:`TraceFormatError` if a bundled file does not import."""
    results = []
    for path in bundled_trace_paths():
        try:
            results.append(import_file(path))
        except TraceFormatError as exc:
            raise TraceFormatError(
                str(path), f"bundled trace failed to import: {exc.reason}"
            ) from exc
    return results
