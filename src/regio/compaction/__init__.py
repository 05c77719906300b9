"""Compaction: the flush that turns a window's pending compactions into summaries
(``docs/runtime.md``, "Compaction flush"), and everything it plans, cuts and commits.

Modules:

* ``_compactor`` -- the drivers of a flush generator (:func:`run_steps`, :func:`arun_steps`)
  with the session's summarizer (the session, :class:`regio.session.Session`, and the
  records saved with it, :class:`regio.session.CompactionBook` and
  :class:`regio.session.CompactionResult`, live in :mod:`regio.session`);
* ``_flush`` -- the flush generator and its rules (:class:`CompactionResult`);
* ``_flushes`` -- the flushes an engine runs (boundary, queued, pressure, manual, room);
* ``_inputs`` -- what a summary reads besides its units (carry-forward, merges);
* ``_planning`` -- which regions to compact and how far;
* ``_cuts`` -- where a compaction cuts (the fewest oldest units to a target);
* ``_fallback`` -- what a failed compaction leaves behind;
* ``_commit`` -- committing one summary (the commit gate);
* ``_durable`` -- durable items in the ``compact_history``;
* ``_reach`` -- ``compact(target_tokens=N)``;
* ``_compactplan`` -- the ``compact`` tool's answer;
* ``_room`` -- compaction before a write so nothing rolls off unsummarized;
* ``_writes`` -- writes and removals that keep the transcript;
* ``_ceiling`` -- making room at the request ceiling;
* ``_delegation`` -- delegating compaction to the provider;
* ``_forking`` -- :class:`ForkSummarizer`: a summary that reads the provider cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from regio._lazy import lazy_exports

if TYPE_CHECKING:
    from ._compactor import arun_steps, run_steps
    from ._forking import ForkSummarizer

#: Public name -> the module that defines it (imported on first use).
_EXPORTS: dict[str, str] = {
    "ForkSummarizer": "._forking",
    "arun_steps": "._compactor",
    "run_steps": "._compactor",
}

__all__ = [
    "ForkSummarizer",
    "arun_steps",
    "run_steps",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
