"""The providers' own compaction as peers, simulated from their documentation.

* ``anthropic-compaction`` — Anthropic's threshold compaction, the ``compact_20260112`` edit of
  ``context_management.edits`` (beta header ``compact-2026-01-12``; "Compaction",
  https://platform.claude.com/docs/en/build-with-claude/compaction, the same text in Amazon
  Bedrock's user guide, https://docs.aws.amazon.com/bedrock/latest/userguide/
  claude-messages-compaction.md). Documented behaviour: the ``trigger`` is
  ``{"type": "input_tokens", "value": N}``, default 150,000, at least 50,000; when a
  request's input tokens exceed it, the API runs an extra sampling pass with the request's
  own model that summarizes the conversation (its default summarization prompt is
  :data:`SUMMARY_PROMPT`), returns a ``compaction`` block at the start of the assistant
  response and continues the response from the compacted context; the client appends the
  response, and on the next requests the API drops every message block before the
  compaction block (the system prompt is kept). Billing: ``usage.iterations`` lists the
  compaction pass (``{"type": "compaction", input_tokens, output_tokens,
  cache_read_input_tokens, cache_creation_input_tokens}``) and the message pass; the
  top-level counts leave the compaction out and the bill is the sum of the iterations.
* ``openai-compaction`` — OpenAI Responses server-side compaction,
  ``context_management: [{"type": "compaction", "compact_threshold": N}]`` ("Compaction",
  https://developers.openai.com/api/docs/guides/compaction): when the rendered token count
  crosses the threshold the server runs a compaction pass, emits an encrypted ``compaction``
  item in the same response and prunes the context before continuing; with stateless input
  chaining the items before the latest compaction item may be dropped (the item carries what
  is needed). The item is opaque: only OpenAI can read it. OpenAI publishes no default
  threshold.

What the bench simulates, for both (:class:`ProviderCompactionPeer`):

* the client sends its whole history as a client of the API does; the request is the tools,
  the system prompt and the messages since the last compaction, after that compaction's block;
* a request whose prompt passes the trigger is billed as two passes, as ``usage.iterations``
  reports them: the **compaction pass**, a request of its own made of what the client sent
  plus :data:`SUMMARY_PROMPT`, in the agent's cache scope just before the call (it reads the
  cached prefix as the provider's pass does; billed in ``compaction_cost_usd`` at the
  agent's model prices, the summary as its output), and the **message pass**, the tools, the
  system prompt and the compaction block alone (the call's own request);
* the summary's text is written by the same offline extractive summarizer the other
  summarizing peers use (the blueprint's ``max_summary_tokens``), wrapped in
  ``<summary>...</summary>`` as the default prompt asks. The provider writes its own with the
  agent's model: the size and content of a real one differ, and retention is measured on this
  simulated text. OpenAI's encrypted item is counted at the simulated summary's size;
* the documented trigger belongs to a 200,000-token window (:data:`DOCUMENTED_WINDOW`); at a
  bench window of ``W`` tokens the trigger and Anthropic's minimum are scaled by
  ``W / 200,000``, as ``--window-tokens`` scales every token count
  (:mod:`regio.bench.pressure`), so the default applies exactly at 200k. OpenAI's threshold is
  set at the same share (three quarters of the window) so both providers compact at the same
  point;
* a compaction pass (or a message pass) holding more prompt tokens than the window allows is
  counted broken, as every strategy's requests are (:mod:`regio.bench.tracking`): the API
  refuses a prompt it cannot hold.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from regio.bench.baselines import PlainMessage, plain_message
from regio.bench.peers.view import PeerView
from regio.content import Entry, Message, Text
from regio.summarizers._extractive import ExtractiveSummarizer

__all__ = [
    "DOCUMENTED_WINDOW",
    "PROVIDER_PEERS",
    "PROVIDER_RULES",
    "SUMMARY_PROMPT",
    "ProviderCompactionPeer",
    "ProviderRule",
    "compaction_item",
    "summary_prompt_message",
]

#: The window the providers' documented trigger figures belong to (Claude Sonnet 4.6's).
DOCUMENTED_WINDOW = 200_000

#: Anthropic's default summarization prompt (docs, "How compaction works"), sent as the last
#: user turn of the compaction pass; OpenAI publishes none, so the simulation uses it for both.
SUMMARY_PROMPT = (
    "You have written a partial transcript for the initial task above. Please write a summary "
    "of the transcript. The purpose of this summary is to provide continuity so you can "
    "continue to make progress towards solving the task in a future context, where the raw "
    "history above may not be accessible and will be replaced with this summary. Write down "
    "anything that would be helpful, including the state, next steps, learnings etc. You "
    "must wrap your summary in a <summary></summary> block."
)


@attrs.frozen
class ProviderRule:
    """One provider's compaction: the peer ``name``, the ``api`` whose item it returns, its
    ``default_trigger`` and ``minimum`` (tokens at :data:`DOCUMENTED_WINDOW`; ``None``: none
    documented) and the ``source`` it is simulated from."""

    name: str
    api: str
    default_trigger: int
    minimum: int | None
    source: str

    def trigger(self, window: int) -> int:
        """The trigger at a ``window``-token window (tokens; module doc): the default scaled
        by ``window / 200,000``, never below the scaled minimum."""
        factor = window / DOCUMENTED_WINDOW
        floor = round(self.minimum * factor) if self.minimum is not None else 1
        return max(round(self.default_trigger * factor), floor, 1)

    def check(self, trigger: int) -> None:
        """Raise ``ValueError`` for a trigger the API refuses at its own window (Anthropic's
        must be at least 50,000 tokens)."""
        if self.minimum is not None and trigger < self.minimum:
            raise ValueError(
                f"{self.name}: trigger {trigger} is below the documented minimum of "
                f"{self.minimum} input tokens ({self.source})"
            )


ANTHROPIC_RULE = ProviderRule(
    "anthropic-compaction",
    "anthropic",
    150_000,
    50_000,
    "https://platform.claude.com/docs/en/build-with-claude/compaction",
)
OPENAI_RULE = ProviderRule(
    "openai-compaction",
    "openai_responses",
    150_000,
    None,
    "https://developers.openai.com/api/docs/guides/compaction",
)

#: Peer name -> its rule.
PROVIDER_RULES: dict[str, ProviderRule] = {r.name: r for r in (ANTHROPIC_RULE, OPENAI_RULE)}
#: The provider peers, in report order.
PROVIDER_PEERS: tuple[str, ...] = tuple(PROVIDER_RULES)


def compaction_item(api: str, summary: str, index: int) -> dict[str, Any]:
    """The provider's compaction block / item as the API returns it: Anthropic
    ``{"type": "compaction", "content": <summary>}``; OpenAI Responses
    ``{"type": "compaction", "id": ..., "encrypted_content": ...}`` (opaque; the simulation
    writes a placeholder naming the summary it stands for)."""
    if api == "anthropic":
        return {"type": "compaction", "content": summary}
    return {
        "type": "compaction",
        "id": f"cmp_{index:04d}",
        "encrypted_content": f"<encrypted: {len(summary)} characters of summary>",
    }


def summary_prompt_message(count: Callable[[str], int]) -> PlainMessage:
    """:data:`SUMMARY_PROMPT` as the compaction pass's last user turn (``count``: text ->
    tokens)."""
    return plain_message(Message.user(SUMMARY_PROMPT), int(count(SUMMARY_PROMPT)))


@attrs.frozen
class CompactionPass:
    """One compaction pass: the ``messages`` it was sent (what the client sent, then the
    summarization prompt) and the summary's tokens (its output)."""

    messages: list[PlainMessage]
    output_tokens: int


@attrs.define
class ProviderCompactionPeer:
    """A provider's threshold compaction (module doc). ``rule``: which provider;
    ``trigger``: input tokens (the whole request: tools, system and messages) above which a
    request is compacted; ``fixed``: the tools' and system prompt's tokens; ``summarizer``:
    the offline summarizer that writes the simulated summary; ``count``: text -> tokens."""

    rule: ProviderRule
    trigger: int
    fixed: int
    summarizer: ExtractiveSummarizer
    count: Any
    plain: list[PlainMessage] = attrs.field(factory=list)
    start: int = 0
    summary: PlainMessage | None = None
    passes: int = 0
    compacted: bool = False
    calls: list[Any] = attrs.field(factory=list)
    prompt: PlainMessage | None = None

    def add(self, pm: PlainMessage) -> None:
        """A recorded message (the client keeps its whole history)."""
        self.plain.append(pm)

    def _shown(self) -> list[PlainMessage]:
        head = [self.summary] if self.summary is not None else []
        return head + self.plain[self.start :]

    def _summarize(self, shown: Sequence[PlainMessage]) -> str:
        entries = [
            Entry(
                id=f"m{k}",
                blocks=pm.message.blocks,
                role=pm.message.role,
                tokens=pm.tokens,
                meta={"summary": True} if pm is self.summary else {},
            )
            for k, pm in enumerate(shown)
        ]
        text = self.summarizer(entries, SUMMARY_PROMPT, None) or "(nothing to summarize)"
        return f"<summary>\n{text}\n</summary>"

    def view(self) -> PeerView:
        """The request of this call: a compaction pass and the compacted message pass when
        the request passes the trigger (module doc), else what the client sends."""
        shown = self._shown()
        total = self.fixed + sum(m.tokens for m in shown)
        if total <= self.trigger or self.start >= len(self.plain):
            return PeerView(shown, summary=self.summary is not None, compacted=self.compacted)
        if self.prompt is None:
            self.prompt = summary_prompt_message(self.count)
        text = self._summarize(shown)
        block = plain_message(Message("assistant", (Text(text),)), int(self.count(text)))
        compaction = CompactionPass([*shown, self.prompt], block.tokens)
        self.summary, self.start = block, len(self.plain)
        self.passes += 1
        self.compacted = True
        return PeerView([block], summary=True, compacted=True, compaction_pass=compaction)
