"""A summarizer that reads the provider cache: :class:`ForkSummarizer` (``docs/runtime.md``,
"Compaction's own cost").

A compaction is a model call. Sent as a fresh prompt (instructions + transcript), it pays for
every summarized token again at the full input price. :class:`ForkSummarizer` instead sends
the agent's last request byte for byte (tools, system, every message, the cache markers) with
the summary instruction appended as a final user message
(:func:`regio.layout.fork_for_summary`), so the provider serves the whole prefix from its
cache and only the instruction and the reply are new. The engine builds that request
(:func:`fork_payload`) when the last request holds the entries to summarize (those appended
since it, the reply to it and what followed, ride in the instruction as a transcript), the
summarizer asks for the agent's own model (a prefix cache is per model) and the fork fits the
summarizer's window; otherwise the summarizer falls back to the chunked transcript prompt of
:class:`regio.summarizers.LLMSummarizer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from regio.content import Entry, Text
from regio.layout import Request, fork_for_summary
from regio.providers.registry import DEFAULT_PROVIDER, find_provider
from regio.session._render import render_payload
from regio.session._state import SessionState
from regio.summarizers._llm import LLMSummarizer, entries_as_transcript
from regio.summarizers._protocol import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAX_SUMMARY_TOKENS,
    summarizer_limits,
)

from ._cuts import entry_number

__all__ = [
    "ForkSummarizer",
    "cheaper_than_transcript",
    "fork_instruction",
    "fork_payload",
    "forked_request",
    "forks_last_request",
]

#: Characters of a message quoted to name where the summarized range starts and ends.
QUOTE_CHARS = 80


def _quote(entry: Entry) -> str:
    text = " ".join(entry.text.split()) or f"[{entry.role or 'entry'} {entry.id}]"
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "\u2026"


def fork_instruction(
    entries: Sequence[Entry],
    standing: str,
    extra: str | None,
    max_summary_tokens: int,
    since: Sequence[Entry] = (),
) -> str:
    """The final user message of a forked summary request: which messages to summarize (the
    first and last quoted, and the earlier summaries among ``entries`` it replaces; for a
    merge of summaries alone, which summaries to merge), the standing requirements (plus
    ``extra``, added) and the size. ``since``: the entries of the range the forked request
    does not hold (appended after it was sent), given as a transcript
    (:func:`regio.summarizers.entries_as_transcript`) after the range."""
    fresh = [e for e in entries if not e.meta.get("summary")]
    if fresh:
        first, last = fresh[0], fresh[-1]
        what = (
            "Pause the task. Summarize, for your own later use, the part of this conversation "
            f"from the message that starts \u201c{_quote(first)}\u201d through the message "
            f"that starts \u201c{_quote(last)}\u201d ({len(fresh)} messages); those messages "
            "will be replaced by your summary, the rest of the context stays as it is."
        )
        carried = [e for e in entries if e.meta.get("summary")]
        if carried:  # a rolling summary (carry_forward: replace) folds the earlier one in
            what += (
                " Your summary also replaces the earlier summary that starts "
                f"\u201c{_quote(carried[0])}\u201d"
                + (f" and {len(carried) - 1} after it" if len(carried) > 1 else "")
                + ": keep what it says that still holds."
            )
    else:
        first, last = entries[0], entries[-1]
        what = (
            "Pause the task. Merge, for your own later use, the earlier summaries in this "
            f"context from the one that starts \u201c{_quote(first)}\u201d through the one "
            f"that starts \u201c{_quote(last)}\u201d ({len(entries)} summaries) into one "
            "summary; they will be replaced by it, the rest of the context stays as it is."
        )
    if since:
        what += (
            " The range ends with messages that came after this context was sent; here they "
            f"are:\n\n{entries_as_transcript(since)}"
        )
    text = (
        f"{what}\n\n{standing.strip()}\n\n"
        f"Keep the summary under {max_summary_tokens} tokens. Reply with the summary only."
    )
    if extra and extra.strip():
        text += f"\n\nAdditional requirements for this summary:\n{extra.strip()}"
    return text


def _reply_text(completion: object) -> str:
    message = getattr(completion, "message", completion)
    if isinstance(message, str):
        return message
    return "".join(b.text for b in getattr(message, "blocks", ()) if isinstance(b, Text))


@attrs.define(eq=False)
class ForkSummarizer:
    """An LLM summarizer over a :class:`regio.agent.providers.Provider` (``api``, ``model``,
    ``complete(payload)`` / ``acomplete(payload)``).

    ``fork(payload)`` sends a forked request (see module doc) and returns the reply text;
    calling the summarizer like any other sends the transcript prompt instead (chunked by the
    engine when it would overflow ``context_window``). ``context_window``,
    ``max_summary_tokens`` and ``reserve_tokens`` are tokens of the summarizer's model.
    Provider errors propagate (the engine counts them as a failed summary).
    """

    provider: Any
    context_window: int = DEFAULT_CONTEXT_WINDOW
    max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS
    reserve_tokens: int | None = None

    @property
    def model(self) -> str:
        """The model the provider asks for."""
        return str(getattr(self.provider, "model", "") or "")

    @property
    def api(self) -> str:
        """The payload format the provider accepts (``anthropic`` / ``openai``)."""
        return str(getattr(self.provider, "api", "anthropic"))

    def transcript_payload(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """The transcript prompt (system + user messages) as a payload of :attr:`api`."""
        payload: dict[str, Any] = {"model": self.model, "max_tokens": self.max_summary_tokens}
        if self.api == "anthropic":
            payload["system"] = messages[0]["content"]
            payload["messages"] = [{"role": "user", "content": messages[1]["content"]}]
        else:
            payload["messages"] = messages
        return payload

    def fork(self, payload: dict[str, Any]) -> str:
        """Send a forked request payload (sync)."""
        return _reply_text(self.provider.complete(payload))

    async def afork(self, payload: dict[str, Any]) -> str:
        """:meth:`fork` awaiting the provider's ``acomplete``."""
        return _reply_text(await self.provider.acomplete(payload))

    def __call__(
        self, entries: Sequence[Entry], standing_instructions: str, extra_instructions: str | None
    ) -> str:
        llm = LLMSummarizer(
            lambda messages: self.fork(self.transcript_payload(messages)),
            context_window=self.context_window,
            max_summary_tokens=self.max_summary_tokens,
            reserve_tokens=self.reserve_tokens,
            model=self.model,
        )
        reply = llm(entries, standing_instructions, extra_instructions)
        assert isinstance(reply, str)
        return reply


def _since(state: SessionState, entries: Sequence[Entry]) -> list[Entry] | None:
    """The entries to summarize that were appended after the last request was laid out
    (entry numbers grow; the request rendered the whole window), or ``None`` when the last
    request does not hold what the fork needs: for a compaction, the new messages it
    summarizes up to those appended since (the reply to it and what followed; its summaries
    are not checked), at least one of them held; for a merge of summaries alone (a
    ``compact_history`` over budget), every summary, so one written after the last request is
    not forked."""
    fresh = [e for e in entries if not e.meta.get("summary")]
    numbers = [entry_number(e.id) for e in (fresh or entries)]
    if not numbers or any(n is None for n in numbers):
        return None
    held = [n < state.last_next_entry for n in numbers if n is not None]  # none is None
    if not fresh:
        return [] if all(held) else None
    if not held[0] or held != sorted(held, reverse=True):  # held first, then appended since
        return None
    return [e for e, h in zip(fresh, held, strict=True) if not h]


def cheaper_than_transcript(
    last: Request, entries: Sequence[Entry], read: float, warm: bool, since: int = 0
) -> bool:
    """A fork's input costs less than the transcript prompt's: the fork pays ``read`` (the
    cache read multiplier of the input price, cache rules data) on the ``last`` request, which
    the provider cached, and the full price on the ``since`` tokens of the entries it adds as
    a transcript (those appended after that request); the transcript prompt pays the full
    price on the tokens it summarizes (all counted as ``Entry.tokens`` and the request's, with
    the window's counter; both add an instruction of about the same size, and the reply is
    the same). A cache that is not ``warm`` (the clock past the last request plus the TTL) is
    written again by a fork, so a fork then never costs less. Measured
    (``docs/benchmark.md``): a merge of a few small summaries forked at a 32k window cost more
    than its transcript prompt. Both requests go to the agent's model, so one input price
    weighs them: a summarizer on another model is never forked (:func:`forked_request`
    checks the model first) and sends the transcript prompt at its own prices."""
    return warm and read * last.tokens + since < sum(e.tokens for e in entries)


def forked_request(
    summarizer: object,
    state: SessionState,
    entries: Sequence[Entry],
    standing: str,
    extra: str | None,
    *,
    read: float | None = None,
    warm: bool = True,
    counter: object = None,
) -> Request | None:
    """The forked request that summarizes ``entries`` (the agent's last request plus the
    instruction), or ``None`` when the summarizer asks for another model than the agent's
    last request (its ``model``; unset: the agent's), there is no last request, it does not
    hold what it summarizes (:func:`_since`: entries appended after it ride in the
    instruction as a transcript), the fork would
    overflow the summarizer's window (``context_window - reserve_tokens``, tokens), or, given
    the cache ``read`` multiplier, the fork would cost more than the transcript prompt
    (:func:`cheaper_than_transcript`; ``read=None``: not checked). ``counter``: the window's
    token counter, which counts the instruction (``None``: 4 characters a token)."""
    request = state.last_request
    if request is None:
        return None
    model = str(getattr(summarizer, "model", "") or "")
    if model and state.last_model and model != state.last_model:
        return None
    since = _since(state, entries)
    if since is None:
        return None
    window, reserve, cap = summarizer_limits(summarizer)
    instruction = fork_instruction(entries, standing, extra, cap, since)
    forked = fork_for_summary(request, instruction, counter)
    if forked.tokens + reserve > window:
        return None
    added = sum(e.tokens for e in since)
    if read is not None and not cheaper_than_transcript(request, entries, read, warm, added):
        return None
    return forked


def forks_last_request(summarizer: object) -> bool:
    """Whether ``summarizer``'s compactions fork the agent's last request (and so read its
    cached prefix) when it runs on the agent's model: it has a ``fork`` method
    (:func:`fork_payload` sends through it), or it stands for one that has (``forks`` true:
    the bench's billed stand-in, :class:`regio.bench.billing.BilledExtractive`)."""
    stands_for_one = getattr(summarizer, "forks", False) is True
    return callable(getattr(summarizer, "fork", None)) or stands_for_one


def fork_payload(
    summarizer: object,
    state: SessionState,
    entries: Sequence[Entry],
    standing: str,
    extra: str | None,
    *,
    read: float | None = None,
    warm: bool = True,
    counter: object = None,
) -> tuple[dict[str, Any], Request] | None:
    """``(payload, request)`` of the forked request that summarizes ``entries``
    (:func:`forked_request`, with ``read``, ``warm`` and ``counter``), or ``None`` when it
    does not fork: no ``fork`` method, or :func:`forked_request` gives none."""
    if not callable(getattr(summarizer, "fork", None)):
        return None
    forked = forked_request(
        summarizer, state, entries, standing, extra, read=read, warm=warm, counter=counter
    )
    if forked is None:
        return None
    model = str(getattr(summarizer, "model", "") or "")
    cap = summarizer_limits(summarizer)[2]
    api = getattr(summarizer, "api", None)  # a provider name, or a renderer's API
    found = find_provider(api) if isinstance(api, str) else None
    api = found.api if found is not None else api if isinstance(api, str) else None
    payload = render_payload(
        forked,
        state.last_provider or DEFAULT_PROVIDER,
        api=api,
        model=model or state.last_model,
        max_tokens=cap,
    )
    return payload, forked
