"""What changes while an engine runs, apart from the window and the compaction book:
:class:`SessionState` (the last request and its estimate, the layout state carried to the next
request, the overflow retry flag). Options that never change are
:class:`regio.runtime.options.EngineOptions`.
"""

from __future__ import annotations

import attrs

from regio.layout import LayoutState, Request

__all__ = ["SessionState"]


@attrs.define(eq=False, kw_only=True)
class SessionState:
    """Request-to-request state of one engine. ``last_estimate`` is the raw token estimate of
    ``last_request`` (fed to the calibration by ``Engine.observe``); ``overflow_retry`` is set
    after an overflow recovery and cleared by the next success or user message (a second
    refusal before then raises)."""

    layout_state: LayoutState | None = None
    last_request: Request | None = None
    last_estimate: int = 0
    last_provider: str = ""
    last_model: str = ""
    overflow_retry: bool = False
