"""The compaction part of an engine: :class:`Compactor` holds what a flush reads and changes
(window, options, bookkeeping, summarizer, transcript) and drives a flush generator with the
summarizer, synchronously (:meth:`Compactor.run`) or awaiting an async one
(:meth:`Compactor.arun`). The rules of a flush are one generator
(:func:`regio.compaction._flush.flush_steps`), shared by both drivers.

Also the compaction records saved with the engine: :class:`CompactionResult`,
:class:`CompactionBook`, :class:`SummaryJob`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable
from typing import Any, TypeVar

import attrs
import msgspec

from regio.content import Entry
from regio.drive import adrive, drive
from regio.events import Event
from regio.regions import Window
from regio.relief._book import ReliefBook
from regio.session._options import EngineOptions
from regio.session._state import SessionState
from regio.session._transcript import RecordKind, Transcript, TranscriptRecord
from regio.summarizers._hierarchy import (
    SummaryCall,
    SummaryOutcome,
    asummarize_entries,
    summarize_entries,
)

from ._forking import fork_payload

__all__ = ["CompactionBook", "CompactionResult", "Compactor", "Steps", "SummaryJob"]


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
    (:class:`regio.relief._book.ReliefBook`).
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
class Compactor:
    """What the compaction rules read and change; ``summarizer`` is any sync or async
    :class:`regio.summarizers.Summarizer`; ``clock`` (seconds) stamps transcript records."""

    window: Window
    options: EngineOptions
    summarizer: Any
    book: CompactionBook = attrs.field(factory=CompactionBook)
    transcript: Transcript = attrs.field(factory=Transcript)
    clock: Callable[[], float] = time.time
    session: SessionState | None = None
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
        session, ttl = self.session, self.cache_ttl_s
        if session is None or ttl is None or session.last_sent_at is None:
            return False
        return float(self.clock()) - session.last_sent_at > ttl

    def fork_terms(self) -> dict[str, Any]:
        """``read`` (the cache read multiplier) and ``warm`` (not :meth:`cache_expired`) for
        :func:`regio.compaction._forking.forked_request`: a fork is sent only when it costs
        less than the transcript prompt."""
        return {"read": self.cache_read, "warm": not self.cache_expired()}

    def _fork(self, job: SummaryJob) -> tuple[dict[str, Any], int] | None:
        """Payload and prompt tokens of the forked request for ``job``
        (:func:`regio.compaction._forking.fork_payload`; kept as the session's
        ``last_summary_request``), or ``None``."""
        if self.session is None:
            return None
        forked = fork_payload(
            self.summarizer,
            self.session,
            job.entries,
            self.options.standing_instructions,
            job.extra,
            **self.fork_terms(),
        )
        if forked is None:
            return None
        payload, request = forked
        self.session.last_summary_request = request
        return payload, request.tokens

    def _forked(self, job: SummaryJob, text: str, prompt_tokens: int) -> SummaryOutcome:
        """The outcome of one forked summarizer call (checked by the flush's commit gate)."""
        fresh = tuple(e.id for e in job.entries if not e.meta.get("summary"))
        ids = fresh or tuple(e.id for e in job.entries)  # a merge of summaries alone
        tokens = self.count_text(text) if text.strip() else 0
        return SummaryOutcome(text, tokens, (SummaryCall(0, ids, prompt_tokens, tokens),))

    def _summarize(self, job: SummaryJob) -> SummaryOutcome:
        forked = self._fork(job)
        if forked is not None:
            payload, prompt_tokens = forked
            return self._forked(job, self.summarizer.fork(payload), prompt_tokens)
        return summarize_entries(
            self.summarizer,
            job.entries,
            self.options.standing_instructions,
            job.extra,
            self.window.counter,
        )

    async def _asummarize(self, job: SummaryJob) -> SummaryOutcome:
        forked = self._fork(job)
        if forked is not None:
            payload, prompt_tokens = forked
            afork = getattr(self.summarizer, "afork", None)
            text = await afork(payload) if afork is not None else self.summarizer.fork(payload)
            return self._forked(job, text, prompt_tokens)
        return await asummarize_entries(
            self.summarizer,
            job.entries,
            self.options.standing_instructions,
            job.extra,
            self.window.counter,
        )

    def run(self, steps: Steps[T]) -> T:
        """Drive ``steps`` with the summarizer (sync); a summarizer exception is thrown into
        the generator, which counts it as a strike or re-raises it."""
        return drive(steps, self._summarize)

    async def arun(self, steps: Steps[T]) -> T:
        """:meth:`run` awaiting an async (or sync) summarizer."""
        return await adrive(steps, self._asummarize)
