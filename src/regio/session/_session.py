"""The session of an engine: :class:`Session` holds what compaction, relief, the budget and
the context tools read and change (window, options, summarizer, compaction book, transcript,
clock, session state, cache terms; the event bus through the window).

Also the records saved with the engine: :class:`CompactionResult`, :class:`CompactionBook`
(with the relief book, :class:`regio.session._reliefbook.ReliefBook`), :class:`SummaryJob`,
and :data:`Steps`, the type of a flush generator.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable
from typing import Any, TypeVar

import attrs
import msgspec

from regio.content import Entry
from regio.events import Event
from regio.regions import Window
from regio.summarizers._hierarchy import SummaryOutcome

from ._options import EngineOptions
from ._reliefbook import ReliefBook
from ._state import SessionState
from ._transcript import RecordKind, Transcript, TranscriptRecord

__all__ = ["CompactionBook", "CompactionResult", "Session", "Steps", "SummaryJob"]


class CompactionResult(msgspec.Struct, frozen=True):
    """What one flush or manual compaction did.

    ``replaced_ids`` left the prompt view (they stay in the transcript), ``kept_ids`` are the
    ids still in the compacted regions; ``tokens_before`` / ``tokens_after`` are the window's
    used tokens; ``summary_ids`` the committed summaries; ``summary_preview`` the start of the
    first one; ``summarizer_calls`` all requests made (hierarchical ones included);
    ``rejected`` the reasons of refused summaries along the way.
    """

    trigger: str
    replaced_ids: tuple[str, ...]
    kept_ids: tuple[str, ...]
    tokens_before: int
    tokens_after: int
    summary_ids: tuple[str, ...] = ()
    summary_preview: str = ""
    summarizer_calls: int = 0
    rejected: tuple[str, ...] = ()

    @property
    def freed(self) -> int:
        """Tokens freed (``tokens_before - tokens_after``)."""
        return self.tokens_before - self.tokens_after


class CompactionBook(msgspec.Struct):
    """Compaction bookkeeping that is saved with the engine.

    ``strikes``: no-progress strikes per region; ``blocked``: digests of content that exhausted
    its attempts; ``floor_warned``: the whole-context trigger warning was given;
    ``versions``: summary version per source region; ``last``: the last result;
    ``scheduled``: instructions of a compaction scheduled by the ``compact`` tool (flushed at the
    next turn boundary), ``None`` when none is scheduled; ``relief``: what the relief chain did
    (:class:`regio.session._reliefbook.ReliefBook`).
    """

    strikes: dict[str, int] = msgspec.field(default_factory=dict)
    blocked: list[str] = msgspec.field(default_factory=list)
    floor_warned: bool = False
    versions: dict[str, int] = msgspec.field(default_factory=dict)
    last: CompactionResult | None = None
    scheduled: str | None = None
    relief: ReliefBook = msgspec.field(default_factory=ReliefBook)


class SummaryJob(msgspec.Struct, frozen=True):
    """One summarization the flush needs: ``entries`` (previous summary first, if any),
    ``extra`` instructions."""

    entries: tuple[Entry, ...]
    extra: str | None


T = TypeVar("T")

#: A flush generator: yields summarizer jobs, receives their outcomes, returns a value.
Steps = Generator[SummaryJob, SummaryOutcome, T]


@attrs.define(eq=False, kw_only=True)
class Session:
    """One engine's session: what compaction, relief, the budget and the context tools read
    and change (the window, with the event bus; the options; the summarizer, any sync or async
    :class:`regio.summarizers.Summarizer`; the compaction book; the transcript; the clock,
    seconds, that stamps transcript records; the session state; the cache terms). The
    services take it as ``c`` or ``session``; :func:`regio.compaction._compactor.run_steps` /
    ``arun_steps`` drive a flush generator with its summarizer."""

    window: Window
    options: EngineOptions
    summarizer: Any
    book: CompactionBook = attrs.field(factory=CompactionBook)
    transcript: Transcript = attrs.field(factory=Transcript)
    clock: Callable[[], float] = time.time
    state: SessionState | None = None
    """The engine's session state: its last request is what a forking summarizer forks."""
    cache_ttl_s: float | None = None
    """Seconds an unused cached prefix of the provider lives (cache rules data); ``None``:
    unknown, no idle compaction."""
    cache_read: float | None = None
    """The provider's cache read multiplier of the input price (cache rules data): a summary
    forks the last request only when that costs less than the transcript prompt."""

    def emit(self, event: Event) -> None:
        """Emit ``event`` on the window's bus."""
        self.window.events.emit(event)

    def count_text(self, text: str) -> int:
        """Tokens of ``text`` with the window's counter."""
        counter = self.window.counter
        assert counter is not None
        return int(counter.count(text))

    def record(
        self,
        kind: RecordKind,
        region: str,
        *,
        entry: Entry | None = None,
        ids: Iterable[str] = (),
        kept: Iterable[str] = (),
    ) -> TranscriptRecord:
        """Append a record (stamped with the window's turn and the clock) to the transcript
        (fields as :class:`regio.session._transcript.TranscriptRecord`)."""
        at = float(self.clock())
        return self.transcript.add(
            kind, region, turn=self.window.turn, entry=entry, ids=ids, at=at, kept=kept
        )

    def take_scheduled(self) -> str | None:
        """Instructions of the compaction the ``compact`` tool scheduled (cleared)."""
        scheduled = self.book.scheduled
        self.book.scheduled = None
        return scheduled

    def cache_expired(self) -> bool:
        """The last request's cached prefix has expired: :attr:`clock` is past its send time
        plus the cache TTL (``cache_ttl_s``, seconds). ``False`` while either is unknown (no
        session, no TTL, nothing sent yet): the cache is taken as warm. The one test of the
        cache's warmth, read by :func:`regio.compaction._flushes.queue_expired` and
        :meth:`fork_terms`."""
        state, ttl = self.state, self.cache_ttl_s
        if state is None or ttl is None or state.last_sent_at is None:
            return False
        return float(self.clock()) - state.last_sent_at > ttl

    def fork_terms(self) -> dict[str, Any]:
        """``read`` (the cache read multiplier) and ``warm`` (not :meth:`cache_expired`) for
        :func:`regio.compaction._forking.forked_request`: a fork is sent only when it costs
        less than the transcript prompt."""
        return {"read": self.cache_read, "warm": not self.cache_expired()}
