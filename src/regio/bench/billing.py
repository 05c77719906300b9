"""regio's summarizer calls billed the way the peers' are.

The bench runs every summarizing strategy on the same offline extractive summarizer, so no key
and no network is needed. A peer's summarizer call is billed as the chat request it sends
(:class:`regio.bench.peers.CompactionCall`: the prompt text and its tokens, the summary as the
output). :class:`BilledExtractive` does the same for regio: each call is kept as the request an
:class:`regio.runtime.LLMSummarizer` would send for those entries
(:func:`regio.runtime.llm_summarizer.summary_prompt`: system requirements plus the transcript),
counted with the replay's counter, with the summary's tokens as its output. Both sides are then
priced by the same cache model (:func:`summary_request`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from regio.bench.peerview import CompactionCall
from regio.cache.types import CacheBlock, CacheRequest
from regio.content import Entry, content_hash
from regio.runtime.extractive import ExtractiveSummarizer
from regio.runtime.llm_summarizer import summary_prompt

__all__ = ["BilledExtractive", "bill", "summary_request"]


@attrs.define(eq=False)
class BilledExtractive(ExtractiveSummarizer):
    """An :class:`ExtractiveSummarizer` that records every call in :attr:`calls` (prompt
    tokens and summary tokens, counted with its ``counter``)."""

    calls: list[CompactionCall] = attrs.field(factory=list)

    def __call__(
        self, entries: Sequence[Entry], standing_instructions: str, extra_instructions: str | None
    ) -> str:
        summary = super().__call__(entries, standing_instructions, extra_instructions)
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


def summary_request(call: Any, rid: str, t: float, scope: str, model: str) -> CacheRequest:
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


def bill(
    summarizer: BilledExtractive, requests: list[CacheRequest], call: Any, scope: str, model: str
) -> None:
    """Append to ``requests`` the summarizer calls made before model call ``call`` (a
    :class:`regio.bench.capture.Call`: its ``index`` and start time ``t``) as billed requests."""
    for k, made in enumerate(summarizer.calls):
        rid = f"{call.index:05d}.{k}"
        requests.append(summary_request(made, rid, call.t, scope, model))
    summarizer.calls.clear()
