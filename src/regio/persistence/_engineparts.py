"""What persistence reads of an engine: the parts a save writes and a load sets.

:class:`regio.engine.Engine` (its :class:`regio.engine._saving.SavedEngine` base declares the
same parts) is the one class that has them; persistence names them as a Protocol because the
engine package imports persistence, so importing the engine here would close an import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from regio.events import Event
    from regio.regions import Window
    from regio.session._budget import EngineBudget
    from regio.session._options import EngineOptions
    from regio.session._session import CompactionBook
    from regio.session._state import SessionState
    from regio.session._transcript import Transcript
    from regio.session._usage import UsageLedger
    from regio.tokens import Calibration, TokenCounter

__all__ = ["EngineParts", "PartsT"]


class EngineParts(Protocol):
    """The parts of an engine a state file or a session store holds (``engine.window``,
    ``engine.book``, ...), and its event bus (``emit``: what a save that left parts out
    reports)."""

    window: Window
    budget: EngineBudget
    state: SessionState
    ledger: UsageLedger

    @property
    def options(self) -> EngineOptions: ...

    @property
    def summarizer(self) -> object: ...

    @property
    def counter(self) -> TokenCounter: ...

    @property
    def calibration(self) -> Calibration: ...

    @property
    def transcript_log(self) -> Transcript: ...

    @property
    def book(self) -> CompactionBook: ...

    def emit(self, event: Event) -> None: ...


#: An engine class's instances: what ``cls(window=..., ...)`` builds in a load.
PartsT = TypeVar("PartsT", bound=EngineParts)
