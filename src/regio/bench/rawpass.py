"""The replay pass that feeds the trace's messages untouched: the ``recorded`` requests and
every peer (:mod:`regio.bench.peers`), each rendered as a plain request
(:func:`regio.bench.baselines.plain_request`). A provider peer's compaction pass
(:mod:`regio.bench.peers.providers`) is billed as a request of its own in the agent's cache
scope, just before the call it was made in; a pass over the window marks that call broken.
A peer's summarizer calls (LangChain's ``SummarizationMiddleware`` takes its summary model as
an argument) go to the blueprint's summarizer model, as regio's do
(:attr:`regio.bench.replaysetup.ReplaySetup.summarizer_model`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from regio.bench.baselines import (
    PlainMessage,
    RecordedBaseline,
    plain_message,
    plain_request,
    tools_text,
)
from regio.bench.billing import summary_request
from regio.bench.peers import Peer, make_peer, peer_allowance
from regio.bench.replaysetup import ReplaySetup, message_text
from regio.bench.tracking import Tracker, prompt_tokens
from regio.cache.types import CacheRequest
from regio.content import Message
from regio.traces.format import AssistantMessage, SystemPrompt, event_message

__all__ = ["RawPass", "raw_pass"]

#: Labels of how each peer summarizes (the table's ``summ.`` column; default ``none``).
SUMMARIZER_KIND = {
    "summarization-middleware": "llm",
    "summarization-middleware-tuned": "llm",
    "anthropic-compaction": "provider",
    "openai-compaction": "provider",
}


class _Emit(Protocol):
    """Renders the messages a strategy shows as one plain request of the current call
    (``rid``: its id, ``out``: its output tokens; defaults: the call's)."""

    def __call__(
        self, shown: list[PlainMessage], *, rid: str = ..., out: int = ...
    ) -> CacheRequest: ...


def _peer_step(
    setup: ReplaySetup,
    peer: Peer,
    tracker: Tracker,
    call: int,
    emit: _Emit,
    system_text: str,
) -> None:
    """One model call of a peer: its view, its new summarizer calls or compaction pass, its
    request."""
    view = peer.view()
    empty: CacheRequest = emit([])
    tracker.compacted = view.compacted
    for k, c in enumerate(peer.calls[len(tracker.compaction_requests) :]):
        tracker.compaction_requests.append(
            summary_request(
                c, f"{empty.id}.{k}", empty.t_start, setup.trace.id, setup.summarizer_model
            )
        )
    made = view.compaction_pass
    if made is not None:
        # sorts after the previous call's requests and before this call's (time, then id)
        passed = emit(made.messages, rid=f"{call - 1:05d}.z", out=made.output_tokens)
        tracker.fork_requests.append(passed)
        if prompt_tokens(passed) > setup.limit:
            tracker.over.add(call)
    tracker.compaction_calls = len(tracker.compaction_requests) + len(tracker.fork_requests)
    tracker.requests.append(emit(view.messages))
    has = any(
        m.message.role == "user" and message_text(m.message) in setup.tasks for m in view.messages
    )
    tracker.seen(
        call,
        has,
        view.summary,
        lambda: system_text + "\n" + "\n".join(message_text(m.message) for m in view.messages),
    )


def _make_peers(
    setup: ReplaySetup,
    names: Sequence[str],
    trackers: dict[str, Tracker],
    allowance: int,
    system: int,
    tools: int,
) -> dict[str, Peer]:
    """The peers of ``names`` with a conversation ``allowance`` (tokens,
    :func:`regio.bench.peers.peer_allowance`; ``system`` / ``tools``: the system prompt's and
    tool schemas' tokens), each tracker told how its peer summarizes."""
    peers: dict[str, Peer] = {}
    window = setup.blueprint.model.context_window
    for name in names:
        if name != "recorded":
            peers[name] = make_peer(
                name,
                allowance,
                system,
                setup.counter.count,
                setup.summarizer(),
                system + tools,
                window=window,
                tasks=setup.tasks,
            )
            trackers[name].summarizer = SUMMARIZER_KIND.get(name, "none")
    return peers


class RawPass:
    """What :func:`raw_pass` returns: the trackers, the recorded requests' prompt sizes and
    their replies' output tokens (one per model call), and the tools' and system prompt's
    tokens (``fixed``)."""

    def __init__(
        self, trackers: dict[str, Tracker], sizes: list[int], outputs: list[int], fixed: int
    ) -> None:
        self.trackers, self.sizes, self.outputs, self.fixed = trackers, sizes, outputs, fixed


def raw_pass(setup: ReplaySetup, names: Sequence[str], notes: list[str]) -> RawPass:
    """The recorded requests and the peers, fed the trace's messages untouched."""
    bp, counter, trace = setup.blueprint, setup.counter, setup.trace
    recorded = RecordedBaseline(counter.count)
    tools = tools_text(trace.header.tools, counter.count)
    trackers = {n: setup.tracker(scored=n != "recorded") for n in names}
    for event in trace.events:
        if isinstance(event, SystemPrompt):
            recorded.set_system(event.text)
            break
    fixed = recorded.system[1] + tools[1]
    allowance = peer_allowance(bp.window_tokens, recorded.system[1], tools[1])
    peers = _make_peers(setup, names, trackers, allowance, recorded.system[1], tools[1])
    sizes: list[int] = []
    outputs: list[int] = []
    sent, has_task = 0, False  # recorded: message tokens so far, a task message seen
    last_t, call = 0.0, 0
    ttl, model = bp.cache.ttl, bp.model.name
    for event in trace.events:
        if isinstance(event, SystemPrompt):
            recorded.set_system(event.text)
        elif isinstance(event, AssistantMessage):
            out = setup.counts(Message("assistant", event.blocks))
            system, messages = recorded.system, recorded.messages

            def emit(
                shown: list[PlainMessage],
                *,
                rid: str = f"{call:05d}",
                out: int = out,
                t0: float = last_t,
                t1: float = event.t,
                system: tuple[str, int] = system,
            ) -> CacheRequest:
                return plain_request(
                    system,
                    shown,
                    id=rid,
                    t_start=t0,
                    t_end=t1,
                    output_tokens=out,
                    scope=trace.id,
                    model=model,
                    ttl=ttl,
                    tools=tools,
                )

            sizes.append(tools[1] + system[1] + sent)
            outputs.append(out)
            if "recorded" in trackers:
                trackers["recorded"].requests.append(emit(messages))
                trackers["recorded"].seen(call, has_task, False, lambda: "")
            for name, peer in peers.items():
                _peer_step(setup, peer, trackers[name], call, emit, system[0])
            call += 1
        message = event_message(event)
        if message is not None:
            pm = plain_message(message, setup.counts(message))
            recorded.add(pm)
            sent += pm.tokens
            has_task = has_task or (message.role == "user" and message_text(message) in setup.tasks)
            if peers and pm.tokens > allowance:
                notes.append(
                    f"a {message.role} message of {pm.tokens} tokens is larger than the peers' "
                    f"conversation allowance ({allowance} tokens): skipped by the peers"
                )
            else:
                for peer in peers.values():
                    peer.add(pm)
        last_t = event.t
    for peer in peers.values():
        notes.extend(peer.notes() if hasattr(peer, "notes") else ())
    return RawPass(trackers, sizes, outputs, fixed)
