"""Stubs shared by the runtime tests (field-cases.md section 0: stub counter, stub summarizer)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from regio.content import Block, Entry, Message, block_text
from regio.engine import Engine
from regio.regions import Window


class StubCounter:
    """One token per whitespace-separated word; counts how often it is called."""

    name = "stub"
    chat_format = None

    def __init__(self) -> None:
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return len(text.split())

    def count_blocks(self, blocks: Iterable[Block]) -> int:
        return sum(self.count(block_text(b)) for b in blocks)

    def count_message(self, message: Message) -> int:
        return self.count_blocks(message.blocks)

    def count_entry(self, entry: Entry) -> int:
        return self.count_blocks(entry.blocks)


class StubSummarizer:
    """Records every input (``inputs``) and output (``outputs``); returns a text of ``size``
    words with no facts: the same text every call, or with ``distinct`` a different one per call
    (``s<call>w<i>`` words), so carry-forward checks cannot pass by accident."""

    def __init__(
        self,
        size: int = 10,
        *,
        window: int = 1_000_000,
        reserve: int = 0,
        text: str | None = None,
        distinct: bool = False,
    ) -> None:
        self.size = size
        self.context_window = window
        self.reserve_tokens = reserve
        self.max_summary_tokens = max(size, 1)
        self.inputs: list[list[Entry]] = []
        self.extras: list[str | None] = []
        self.text = text
        self.distinct = distinct
        self.outputs: list[str] = []

    def __call__(self, entries: Sequence[Entry], standing: str, extra: str | None) -> str:
        total = sum(e.tokens for e in entries)
        if total + self.reserve_tokens > self.context_window:
            raise RuntimeError(
                f"stub summarizer overflow: {total} + {self.reserve_tokens} > {self.context_window}"
            )
        self.inputs.append(list(entries))
        self.extras.append(extra)
        if self.text is not None:
            out = self.text
        elif self.distinct:
            out = " ".join(f"s{len(self.inputs)}w{i}" for i in range(self.size))
        else:
            out = " ".join(f"sum{i}" for i in range(self.size))
        self.outputs.append(out)
        return out


def make_engine(
    regions: list[Any],
    *,
    max_tokens: int = 100_000,
    summarizer: Any = None,
    counter: Any = None,
    **options: Any,
) -> Engine:
    window = Window(regions=regions, max_tokens=max_tokens, counter=counter or StubCounter())
    options.setdefault("provider", "anthropic")
    options.setdefault("model", "stub-model")
    return Engine(window=window, summarizer=summarizer or StubSummarizer(), **options)


def words(n: int, tag: str = "w") -> str:
    """A text of exactly ``n`` words."""
    return " ".join(f"{tag}{i}" for i in range(n))


def summary_engine(
    max_tokens: int,
    *,
    system: tuple[int, int],
    history: int,
    conversation: tuple[int | str, int],
    summary: int,
    **options: Any,
) -> Engine:
    """An engine of three regions: a stable ``system`` prompt (``(budget, words written)``),
    a ``history`` of summaries (budget) and a ``conversation`` under ``compact`` eviction
    (``(budget, target)``), summarized by a :class:`StubSummarizer` of ``summary`` words;
    ``options`` go to the engine (``relief=...``)."""
    from regio.policies.eviction import Compact
    from regio.regions import CompactHistory, Pinned, SlidingWindow

    budget, target = conversation
    engine = make_engine(
        [
            Pinned(name="system", budget=system[0], volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=history),
            SlidingWindow(name="conversation", budget=budget, eviction=Compact(target=target)),
        ],
        max_tokens=max_tokens,
        summarizer=StubSummarizer(size=summary),
        **options,
    )
    engine.write("system", words(system[1], "sys"))
    return engine


def relieving_engine(max_tokens: int) -> Engine:
    """:func:`summary_engine` with a 3,000-token system prompt (2,500 words), a 2,000-token
    history, a conversation of 75% of ``max_tokens`` compacting to 2,000 tokens, 60-word
    summaries and relief that clears after a summary (keeping the newest result), with the
    user's first message ("fix the bug") admitted."""
    from regio.policies.relief import ReliefPolicy

    engine = summary_engine(
        max_tokens,
        system=(3000, 2500),
        history=2000,
        conversation=("75%", 2000),
        summary=60,
        relief=ReliefPolicy(keep_last=1, trim=False, clear_after_summary=True),
    )
    engine.add_user("fix the bug")
    return engine
