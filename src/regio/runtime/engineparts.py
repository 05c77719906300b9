"""The :class:`Engine`'s parts, read and assigned through one front.

An engine owns an :class:`regio.runtime.EngineBudget` (counting, the ceiling) and a
:class:`regio.runtime.Compactor` (compaction and its bookkeeping); both read the engine's
:class:`regio.runtime.EngineOptions`. The options live on those two parts only, and
``engine.options = ...`` hands the new options to both, so a budget and a compactor never read
different options (the context window, the relief policy, standing instructions).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from regio.layout import RenderLog
    from regio.regions import Window
    from regio.tokens import Calibration, TokenCounter

    from .budget import EngineBudget
    from .compactor import CompactionBook, Compactor
    from .options import EngineOptions
    from .state import SessionState
    from .transcript import Transcript

__all__ = ["EngineParts"]


class EngineParts:
    """Properties over an engine's ``budget``, ``compactor``, ``state`` and ``window``."""

    window: Window
    budget: EngineBudget
    compactor: Compactor
    state: SessionState

    @property
    def options(self) -> EngineOptions:
        """The engine's :class:`EngineOptions` (frozen; assign a new value to change them:
        it reaches the budget and the compactor alike)."""
        return self.budget.options

    @options.setter
    def options(self, value: EngineOptions) -> None:
        self.budget.options = value
        self.compactor.options = value

    @property
    def summarizer(self) -> Any:
        """The summarizer compactions call (assignable)."""
        return self.compactor.summarizer

    @summarizer.setter
    def summarizer(self, value: Any) -> None:
        self.compactor.summarizer = value

    @property
    def render_log(self) -> RenderLog:
        """The session's :class:`regio.layout.RenderLog` (assignable)."""
        return self.state.render_log

    @render_log.setter
    def render_log(self, value: RenderLog) -> None:
        self.state.render_log = value

    @property
    def calibration(self) -> Calibration:
        """Estimate corrections per ``provider:model`` (the budget's)."""
        return self.budget.calibration

    @property
    def book(self) -> CompactionBook:
        """Compaction bookkeeping (strikes, versions, the last result)."""
        return self.compactor.book

    @property
    def transcript_log(self) -> Transcript:
        """The canonical append-only log."""
        return self.compactor.transcript

    @property
    def counter(self) -> TokenCounter:
        """The token counter (the window's)."""
        counter = self.window.counter
        assert counter is not None
        return counter
