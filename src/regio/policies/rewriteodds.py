"""Will the next request rewrite the conversation? The odds, from the sizes of the last steps.

A request's ``newest`` cache marker writes the conversation up to its newest block at the
provider's write price (Anthropic: 1.25x the input price for a 5-minute marker) so that the next
request reads it at the read price (0.1x). When the next request rewrites the conversation
before that block instead -- a compaction (the summary opens the messages) or a relief pass
(clearing or trimming old tool results) -- the write is never read: the request would have paid
1.0x for those tokens left unmarked, and the marker's premium (0.25x) is lost. A marker pays
when the odds that the next request reads it are at least the provider's
:attr:`regio.layout.CacheEconomics.mark_odds` (``(m_write - m_plain) / (m_write - m_read)``,
0.25 / 1.15 = 0.217 for Anthropic's 5-minute marker; 0 for a cache without a write fee, whose
markers always pay).

The engine rewrites the conversation at a turn boundary when the conversation reaches its
token trigger (:attr:`regio.regions.SlidingWindow.token_trigger`, the cost controller's or the
window-fill one) or no longer fits the room the window has for it: the next request rewrites
when the step before it (the model's reply and what answers it: tool results, a user message)
brings the conversation there. How large that step will be is not known; the steps the session
made are. :func:`rewrite_odds` is the share of the last :data:`STEP_HISTORY` steps that would
(the region's predicate, :meth:`regio.regions.SlidingWindow.rewrite_odds`, which weighs each
size against the trigger as that step would move it: the trigger follows the measured tokens
per step): the empirical odds, under the assumption that the next step is drawn like the last
ones, that the next request rewrites. Under :data:`MIN_STEPS` steps it says nothing
(``None``), and the marker is placed as always; so does a conversation whose compaction's
summary request forks the last request and reads its prefix
(:attr:`regio.regions.SlidingWindow.summary_reads_request`: a
:class:`regio.compaction.ForkSummarizer` on the agent's own model).

What a conversation's steps admitted is kept by :class:`StepLog` (a step: a model reply and
what answers it, from one assistant message to the next, so what one request adds to the
next): for the last :data:`STEP_HISTORY` steps, the tokens the conversation admitted and how
much the window's other regions grew meanwhile (a parked tool output, a note; negative when
they shrank), and the step in progress. It is saved with the conversation
(``extra["steps"]``: ``{"done": [[tokens, others], ...], "open": [tokens, others at its
start]}``); a state without it, or with a malformed one, loads with no steps.

Where it pays: a window that holds two or three steps (large parallel tool results at a 32k
window) is rewritten on most requests, and the newest marker wrote tokens no request read;
measured on generated sessions in docs/benchmark.md ("Writes no request reads").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from regio.policies.costcontrol import PAYBACK_SHARE

__all__ = [
    "MIN_STEPS",
    "STEP_HISTORY",
    "StepLog",
    "push_step",
    "rewrite_horizon",
    "rewrite_odds",
]

#: Steps a conversation remembers (the newest last).
STEP_HISTORY = 32

#: Fewest steps the odds are taken from; fewer: no odds (``None``).
MIN_STEPS = 8


def rewrite_odds(
    steps: Sequence[tuple[int, int]], reaches_trigger: Callable[[int], bool], room: int
) -> float | None:
    """The odds (0-1) that the next step rewrites the conversation: the share of ``steps``
    (the last steps, the newest last, each ``(tokens, others)``: the tokens the conversation
    admitted and the tokens the window's other regions grew by, negative when they shrank)
    after which the conversation reaches its trigger (``reaches_trigger(tokens)``) or passes
    the ``room`` it has (``tokens`` plus the others' growth above ``room``: an elastic
    conversation's room is what the other regions leave); ``None`` with fewer than
    :data:`MIN_STEPS` steps. ``reaches_trigger`` must not turn false for a larger step: it is
    asked about at most ``log2`` of the distinct sizes (a bisection)."""
    if len(steps) < MIN_STEPS:
        return None
    sizes = sorted({tokens for tokens, _others in steps})
    lo, hi = 0, len(sizes)  # the first size that reaches the trigger is sizes[lo]
    while lo < hi:
        mid = (lo + hi) // 2
        if reaches_trigger(sizes[mid]):
            hi = mid
        else:
            lo = mid + 1
    least = sizes[lo] if lo < len(sizes) else None
    hits = sum(
        1
        for tokens, others in steps
        if (least is not None and tokens >= least) or tokens + max(0, others) > room
    )
    return hits / len(steps)


def rewrite_horizon(steps: Sequence[int], trigger: int, used: int, replies: int) -> float | None:
    """How many more requests the conversation is expected to go before it is rewritten
    anyway (a compaction at its trigger): the steps its ``trigger`` is away from ``used``
    (tokens) at the mean of ``steps`` (the tokens the last complete steps admitted),
    ``(trigger - used) / mean``, and no more than ``PAYBACK_SHARE x replies``
    (:data:`regio.policies.costcontrol.PAYBACK_SHARE`, 1/3: a session that has made
    ``replies`` requests makes at least a third as many more with three chances in four, the
    Copernican estimate the cost controller's early trigger uses); ``0.0`` at or past the
    trigger; ``None`` with fewer than :data:`MIN_STEPS` steps or none that admitted tokens.
    The freezing tail weighs a stale copy's rent over this horizon
    (:func:`regio.layout.tail.forecast_due`)."""
    if len(steps) < MIN_STEPS:
        return None
    mean = sum(steps) / len(steps)
    if mean <= 0:
        return None
    return max(0.0, min((trigger - used) / mean, PAYBACK_SHARE * max(0, replies)))


def push_step(
    steps: Sequence[tuple[int, int]], step: tuple[int, int]
) -> tuple[tuple[int, int], ...]:
    """``steps`` with ``step`` appended, the oldest dropped past :data:`STEP_HISTORY`."""
    return (*steps, (int(step[0]), int(step[1])))[-STEP_HISTORY:]


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _pair(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(_count(x) for x in value)


@attrs.frozen
class StepLog:
    """The last steps (``done``: ``(tokens, others)`` pairs, the newest last), and the step
    in progress (``open_tokens`` admitted so far; ``open_others``: the other regions' tokens
    when it began; ``started``: whether one began). Immutable: a region copied for a dry run
    shares it safely."""

    done: tuple[tuple[int, int], ...] = ()
    open_tokens: int = 0
    open_others: int = 0
    started: bool = False

    def appended(self, tokens: int, *, reply: bool, others: int) -> StepLog:
        """The log after an appended message of ``tokens``; ``reply``: an assistant message,
        which closes the step in progress and opens the next; ``others``: the other regions'
        tokens now."""
        log = self
        if reply:
            done = self.done
            if self.started:
                done = push_step(done, (self.open_tokens, others - self.open_others))
            log = StepLog(done, 0, others, True)
        if not log.started:  # what comes before the first reply is no step
            return log
        return attrs.evolve(log, open_tokens=log.open_tokens + tokens)

    def samples(self, others: int) -> tuple[tuple[int, int], ...]:
        """The steps the odds are taken from: the last ones and the one in progress (with
        ``others``, the other regions' tokens now)."""
        if not self.started:
            return self.done
        return (*self.done, (self.open_tokens, others - self.open_others))

    def to_extra(self) -> dict[str, Any] | None:
        """The saved form (module doc); ``None`` when nothing was logged."""
        if not (self.done or self.started):
            return None
        return {
            "done": [list(p) for p in self.done],
            "open": [self.open_tokens, self.open_others] if self.started else None,
        }

    @classmethod
    def from_extra(cls, value: object) -> StepLog:
        """The log of a saved form (module doc); an empty one for anything else."""
        if not isinstance(value, dict):
            return cls()
        done, opened = value.get("done"), value.get("open")
        if not isinstance(done, list) or not all(_pair(p) for p in done):
            return cls()
        pairs = tuple((int(a), int(b)) for a, b in done)[-STEP_HISTORY:]
        if isinstance(opened, list) and _pair(opened):
            return cls(pairs, int(opened[0]), int(opened[1]), True)
        return cls(pairs)
