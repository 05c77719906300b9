"""The drivers of a flush generator: :func:`run_steps` drives one with the session's
summarizer synchronously, :func:`arun_steps` awaiting an async one. The rules of a flush are
one generator (:func:`regio.compaction._flush.flush_steps`), shared by both drivers; a summary
forks the last request when that reads the provider cache
(:func:`regio.compaction._forking.fork_payload`).
"""

from __future__ import annotations

from functools import partial
from typing import Any, TypeVar

from regio.drive import adrive, drive
from regio.session._session import Session, Steps, SummaryJob
from regio.summarizers._hierarchy import (
    SummaryCall,
    SummaryOutcome,
    asummarize_entries,
    summarize_entries,
)

from ._forking import fork_payload

__all__ = ["arun_steps", "run_steps"]

T = TypeVar("T")


def _fork(session: Session, job: SummaryJob) -> tuple[dict[str, Any], int] | None:
    """Payload and prompt tokens of the forked request for ``job``
    (:func:`regio.compaction._forking.fork_payload`; kept as the session's
    ``last_summary_request``), or ``None``."""
    if session.state is None:
        return None
    forked = fork_payload(
        session.summarizer,
        session.state,
        job.entries,
        session.options.standing_instructions,
        job.extra,
        **session.fork_terms(),
        counter=session.window.counter,
    )
    if forked is None:
        return None
    payload, request = forked
    session.state.last_summary_request = request
    return payload, request.tokens


def _forked(session: Session, job: SummaryJob, text: str, prompt_tokens: int) -> SummaryOutcome:
    """The outcome of one forked summarizer call (checked by the flush's commit gate)."""
    fresh = tuple(e.id for e in job.entries if not e.meta.get("summary"))
    ids = fresh or tuple(e.id for e in job.entries)  # a merge of summaries alone
    tokens = session.count_text(text) if text.strip() else 0
    return SummaryOutcome(text, tokens, (SummaryCall(0, ids, prompt_tokens, tokens),))


def _summarize(session: Session, job: SummaryJob) -> SummaryOutcome:
    forked = _fork(session, job)
    if forked is not None:
        payload, prompt_tokens = forked
        return _forked(session, job, session.summarizer.fork(payload), prompt_tokens)
    return summarize_entries(
        session.summarizer,
        job.entries,
        session.options.standing_instructions,
        job.extra,
        session.window.counter,
    )


async def _asummarize(session: Session, job: SummaryJob) -> SummaryOutcome:
    forked = _fork(session, job)
    if forked is not None:
        payload, prompt_tokens = forked
        afork = getattr(session.summarizer, "afork", None)
        text = await afork(payload) if afork is not None else session.summarizer.fork(payload)
        return _forked(session, job, text, prompt_tokens)
    return await asummarize_entries(
        session.summarizer,
        job.entries,
        session.options.standing_instructions,
        job.extra,
        session.window.counter,
    )


def run_steps(session: Session, steps: Steps[T]) -> T:
    """Drive ``steps`` with the summarizer (sync); a summarizer exception is thrown into
    the generator, which counts it as a strike or re-raises it."""
    return drive(steps, partial(_summarize, session))


async def arun_steps(session: Session, steps: Steps[T]) -> T:
    """:func:`run_steps` awaiting an async (or sync) summarizer."""
    return await adrive(steps, partial(_asummarize, session))
