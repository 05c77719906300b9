"""Recorded agent runs: regio's JSONL trace format and importers for public formats.

* :mod:`regio.traces.format` — the events and :class:`Trace`; :mod:`regio.traces.jsonl` —
  :func:`read_trace`, :func:`write_trace` (the JSONL text);
* :mod:`regio.traces.detect` — :func:`import_file` with format auto-detection;
* :mod:`regio.traces.importers` — SWE-agent, mini-swe-agent, tau-bench, OpenAI messages;
  :mod:`regio.traces.claudecode`, :mod:`regio.traces.codex`, :mod:`regio.traces.openhands` —
  Claude Code sessions, Codex CLI rollouts, OpenHands trajectories (with recorded usage);
* :mod:`regio.traces.shared` — what the importers share (headers, recorded timestamps, tool
  arguments in regio's invalid-arguments form); no importer imports another;
* :mod:`regio.traces.source`, :mod:`regio.traces.safejson` — bounded reading of untrusted files;
* :mod:`regio.traces.builder` — call-id repair and the synthetic clock (:class:`Timing`);
* :mod:`regio.traces.bundled` — the real runs shipped in ``examples/traces``;
* :mod:`regio.traces.callusage` — :class:`Usage`, one call's recorded usage and each
  provider's names of its counts (:meth:`Usage.reported_names`; re-exported by ``format``);
* :mod:`regio.traces.usage` — recorded provider usage per model call;
* :mod:`regio.traces.synth` — the seeded long-session generator (:func:`synthesize`).
"""

from __future__ import annotations

from regio.traces.builder import Timing, TraceBuilder
from regio.traces.bundled import bundled_trace_paths, bundled_traces_dir, load_bundled_traces
from regio.traces.detect import FORMATS, ImportResult, detect_format, import_file, load_source
from regio.traces.errors import ImportIssue, TraceError, TraceFormatError
from regio.traces.format import (
    AssistantMessage,
    Compaction,
    Header,
    RegionAppend,
    RegionRelease,
    RegionWrite,
    Step,
    SystemPrompt,
    ToolResults,
    Trace,
    TraceEvent,
    Usage,
    UserMessage,
)
from regio.traces.jsonl import dumps_trace, loads_trace, read_trace, write_trace
from regio.traces.safejson import DEFAULT_LIMITS, TraceLimits
from regio.traces.synth import CODING_PROFILE, synthesize
from regio.traces.synthprofile import SynthProfile, profile_from_traces
from regio.traces.usage import RecordedUsageTotals, recorded_usage, usage_totals

__all__ = [
    "CODING_PROFILE",
    "DEFAULT_LIMITS",
    "FORMATS",
    "AssistantMessage",
    "Compaction",
    "Header",
    "ImportIssue",
    "ImportResult",
    "RecordedUsageTotals",
    "RegionAppend",
    "RegionRelease",
    "RegionWrite",
    "Step",
    "SynthProfile",
    "SystemPrompt",
    "Timing",
    "ToolResults",
    "Trace",
    "TraceBuilder",
    "TraceError",
    "TraceEvent",
    "TraceFormatError",
    "TraceLimits",
    "Usage",
    "UserMessage",
    "bundled_trace_paths",
    "bundled_traces_dir",
    "detect_format",
    "dumps_trace",
    "import_file",
    "load_bundled_traces",
    "load_source",
    "loads_trace",
    "profile_from_traces",
    "read_trace",
    "recorded_usage",
    "synthesize",
    "usage_totals",
    "write_trace",
]
