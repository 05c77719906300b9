"""regio's summarizer calls billed the way the peers' are.

The bench runs every summarizing strategy on the same offline extractive summarizer, so no key
and no network is needed. A peer's summarizer call is billed as the chat request it sends
(:class:`regio.bench.peers.CompactionCall`: the prompt text and its tokens, the summary as the
output). :class:`BilledExtractive` does the same for regio, with the request regio's own LLM
summarizer sends for those entries:

* **forked** (:func:`regio.compaction._forking.forked_request`, the decision and request the
  engine's own fork makes): when the blueprint's summarizer runs on the agent's own model
  (``summarizer.model`` unset or the agent's), the last request holds what it summarizes
  (entries appended after it ride in the instruction as a transcript), the fork fits the
  summarizer's window and it costs less than the transcript prompt
  (:func:`regio.compaction._forking.cheaper_than_transcript`), a
  :class:`regio.compaction.ForkSummarizer` sends the agent's last request byte for byte with
  the summary instruction appended (``docs/runtime.md``, "Compaction's own cost"). It is
  kept as that :class:`regio.layout.Request` and priced in the agent's own cache scope,
  between the two model calls it came between (:func:`fork_request`), so it reads what the
  agent's last request cached, as it would at the provider;
* otherwise the **transcript prompt** an :class:`regio.summarizers.LLMSummarizer` sends
  (:func:`regio.summarizers._llm.summary_prompt`: system requirements plus the
  transcript), priced in a scope of its own (:func:`summary_request`), as the peers' are.

The fork is decided per summarizer call, as the engine's is per job: the same thing at the
bench's sizes, where no summary is chunked (a chunked job's calls would each be checked).
Either way it is counted with the replay's counter, with the summary's tokens as its output.
A fork is priced by the run's cache model, at the agent model's prices. A transcript prompt is
a request to the summarizer's own model: when the blueprint names another model than the
agent's (:attr:`regio.blueprint.Blueprint.summary_model`) and the cache rules give its
prices, it is priced by that model's cache rule (its prices, its minimum cacheable prefix), in
its scope of its own, whatever the run's cache model (a Claude Haiku summarizer is paid to
Anthropic even when the agent's requests are simulated under OpenAI's cache);
:func:`summarizer_pricing` names that cache model. When the cache rules do not know the
summarizer's model, or record no price for it, its calls are unpriced (``None``, as
:mod:`regio.cache.billing` has it), never billed at the agent model's prices, and a note
says so."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from regio.bench.capture import Call
from regio.bench.peers.view import CompactionCall
from regio.cache.types import CacheBlock, CacheRequest, CacheRuleError
from regio.compaction._forking import forked_request
from regio.content import Entry, content_hash
from regio.layout import Request, to_cache_request
from regio.providers import cache_model_for
from regio.session._cacheprices import priced
from regio.session._state import SessionState
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.summarizers._llm import summary_prompt

if TYPE_CHECKING:
    from regio.blueprint import Blueprint

__all__ = [
    "BilledExtractive",
    "ForkedCall",
    "bill",
    "fork_request",
    "summarizer_pricing",
    "summary_request",
]


def summarizer_pricing(blueprint: Blueprint) -> tuple[str | None, str | None]:
    """``(cache model, note)`` for the transcript prompts of ``blueprint``'s summarizer: the
    cache model name (``provider:model``, :func:`regio.providers.cache_model_for`) of a
    summarizer on another model than the agent's, which bills them (``None``: a summarizer on
    the agent's model, whose calls the run's own cache model bills). A summarizer whose model
    the cache rules do not know, or know without a price, has its calls unpriced
    (:mod:`regio.cache.billing`: never billed at another model's prices), and so is the
    strategy's cost; the note says which, or names the model and rule that price them."""
    named = blueprint.summary_model
    if named is None:
        return None, None
    provider, model = named
    name = f"{provider}:{model}"
    try:
        rule = cache_model_for(name).rule
    except CacheRuleError:
        return name, (
            f"summarizer model {model!r} ({provider}) is not in the cache rules: its calls "
            "are unpriced, and so is the cost of every strategy that summarized"
        )
    if priced(rule.price) is None:
        return name, (
            f"summarizer model {model!r} has no price in the cache rules ({rule.id}): its "
            "calls are unpriced, and so is the cost of every strategy that summarized"
        )
    return name, (
        f"summarizer calls billed as requests to {model} at its own prices "
        f"(${rule.price.input:g} / ${rule.price.output:g} per MTok, {rule.id})"
    )


@attrs.frozen
class ForkedCall:
    """One summarizer call sent as a fork of the agent's last request: the forked
    ``request`` (the last request's blocks plus the instruction) and the summary's tokens."""

    request: Request
    output_tokens: int


@attrs.define(eq=False)
class BilledExtractive(ExtractiveSummarizer):
    """An :class:`ExtractiveSummarizer` that records every call in :attr:`calls` (prompt
    tokens and summary tokens, counted with its ``counter``). With ``session`` (the engine's
    :class:`regio.session._state.SessionState`) a call the engine's fork would send as a fork
    of the last request (module doc) is recorded as a :class:`ForkedCall`. ``model`` and
    ``api`` name the LLM it stands for when that is not the agent's (the blueprint's
    ``summarizer.model`` and its provider; empty: the agent's), as a
    :class:`regio.compaction.ForkSummarizer` names its own: the engine's cost controller then
    prices its summaries at that model's prices, as the bench bills them."""

    calls: list[CompactionCall | ForkedCall] = attrs.field(factory=list)
    session: SessionState | None = None
    #: the engine's :meth:`regio.session._session.Session.fork_terms` (cache read
    #: multiplier, warm cache), so a call forks exactly when the engine's fork would
    terms: Callable[[], dict[str, Any]] = dict
    model: str = ""
    api: str | None = None
    #: it stands for a summarizer that forks the agent's last request (set before the engine
    #: is built: ``SlidingWindow.summary_reads_request``)
    forks: bool = False

    def __call__(
        self, entries: Sequence[Entry], standing_instructions: str, extra_instructions: str | None
    ) -> str:
        summary = super().__call__(entries, standing_instructions, extra_instructions)
        if self.session is not None:
            forked = forked_request(
                self,
                self.session,
                entries,
                standing_instructions,
                extra_instructions,
                **self.terms(),
                counter=self.measure,
            )
            if forked is not None:
                self.calls.append(ForkedCall(forked, int(self.measure.count(summary))))
                return summary
        messages = summary_prompt(
            entries,
            standing_instructions,
            extra_instructions,
            max_summary_tokens=self.max_summary_tokens,
        )
        prompt = "\n".join(m["content"] for m in messages)
        count = self.measure.count
        self.calls.append(CompactionCall(prompt, int(count(prompt)), int(count(summary))))
        return summary


def summary_request(
    call: CompactionCall, rid: str, t: float, scope: str, model: str
) -> CacheRequest:
    """A summarizer call as the request an LLM summarizer receives: one user message."""
    block = CacheBlock(
        call.prompt_tokens,
        content_hash(["messages", "user", call.prompt]),
        "text",
        "messages",
        role="user",
        message=0,
    )
    return CacheRequest(
        id=rid,
        blocks=(block,),
        scope=f"{scope}#summarizer",
        model=model,
        t_start=t,
        t_end=t,
        output_tokens=call.output_tokens,
    )


def fork_request(call: ForkedCall, rid: str, t: float, scope: str, model: str) -> CacheRequest:
    """A forked summarizer call as the request the provider receives, in the agent's own
    cache ``scope`` at time ``t`` (seconds)."""
    return to_cache_request(
        call.request,
        t_start=t,
        t_end=t,
        id=rid,
        model=model,
        scope=scope,
        output_tokens=call.output_tokens,
    )


def bill(
    summarizer: BilledExtractive,
    requests: tuple[list[CacheRequest], list[CacheRequest]],
    call: Call,
    after: tuple[str, float],
    scope: str,
    model: str,
) -> None:
    """Append the summarizer calls made before model call ``call`` (a
    :class:`regio.bench.capture.Call`: its ``index`` and start time ``t``) as billed requests:
    ``requests`` = (transcript prompts, forks). ``after`` = (the id of the agent's previous
    request, the time it ended): a fork is stamped then, with an id that sorts after that
    request and before ``call``'s (the cache model orders requests by time, then id). A fork
    is a request to the agent's ``model``, a transcript prompt one to the summarizer's own
    (its ``model``, else the agent's)."""
    transcripts, forks = requests
    prev_id, prev_end = after
    for k, made in enumerate(summarizer.calls):
        if isinstance(made, ForkedCall):
            forks.append(fork_request(made, f"{prev_id}.s{k:03d}", prev_end, scope, model))
        else:
            rid = f"{call.index:05d}.{k}"
            own = summarizer.model or model
            transcripts.append(summary_request(made, rid, call.t, scope, own))
    summarizer.calls.clear()
