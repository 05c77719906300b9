"""What extracting a long span's durable items costs per sentence.

``extract_items`` (:mod:`regio.summarizers.extract`, the item extractor that replaced the
salience sorter) reads every sentence of the summarized span once; each sentence becomes an
item, supersedes an earlier one (a newer value of its key) or closes open items, and the
lines of earlier summaries outside any item list are carried once each. The span is a
synthetic agent session: values of thousands of settings and of 300 entities, to-dos and their
completions, constraints, errors, decisions and plain prose, one sentence in ten of each kind.

Target (ratio within one run, medians of 5 runs): 2,000 sentences cost at most 15x 200, and
20,000 carried lines at most 15x 2,000 (linear: 10x). Measured 2026-12-05 on the shared 2-core
machine: before, 16.7 ms and 312 ms (ratio 18.7; every new key was compared with every kept
key for a related one) and 2.9 ms and 104 ms (ratio 36: the carried lines' set was rebuilt for
each earlier summary); after (keys indexed by concept name, one set of carried lines), 15.7 ms
and 224 ms (14.3) and 2.1 ms and 7.0 ms (3.4).

Run with ``pytest benchmarks/test_bench_extract.py -s --benchmark-enable`` (the figures are
printed; pytest-benchmark adds its table).
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

import pytest

from regio.content import Entry, Text
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.summarizers.extract import extract_items

_NOUNS = (
    "billing", "parser", "client", "cache", "schema", "router", "ledger", "invoice", "webhook",
    "scheduler", "exporter", "metrics", "dashboard", "alerts", "sidebar", "queue", "worker",
)  # fmt: skip


def _name(rng: random.Random) -> str:
    """One of ~17,000 service names (letters only: a setting's key)."""
    return rng.choice(_NOUNS) + "".join(rng.choice("abcdefghij") for _ in range(3))


_KINDS = (
    lambda r, i: f"Set the {_name(r)} timeout to {r.randint(1, 600)}s.",
    lambda r, i: f"The {_name(r)} host is db-{r.randint(1, 40)}.internal.",
    lambda r, i: f"Reservation R{r.randint(100, 400)} is now for May {r.randint(1, 28)}.",
    lambda r, i: f"TODO-{i}: refactor the {r.choice(_NOUNS)} {r.choice(_NOUNS)} module.",
    lambda r, i: f"Closed TODO-{r.randint(0, max(0, i - 1))}.",
    lambda r, i: f"You must never touch the {r.choice(_NOUNS)} migrations in step {i}.",
    lambda r, i: f"The {r.choice(_NOUNS)} test is now failing on run {i}.",
    lambda r, i: f"We decided to go with the {r.choice(_NOUNS)} approach for case {i}.",
    lambda r, i: f"Done: update the {r.choice(_NOUNS)} {r.choice(_NOUNS)} docs.",
    lambda r, i: f"I looked at the {r.choice(_NOUNS)} code and it reads fine overall {i}.",
)


def _span(sentences: int, seed: int = 7) -> list[Entry]:
    """``sentences`` sentences, five per entry, alternating user and assistant."""
    rng = random.Random(seed)
    lines = [_KINDS[i % len(_KINDS)](rng, i) for i in range(sentences)]
    return [
        Entry(
            id=f"e{n}",
            blocks=(Text(" ".join(lines[k : k + 5])),),
            role="user" if n % 2 else "assistant",
        )
        for n, k in enumerate(range(0, sentences, 5))
    ]


def _median_seconds(entries: list[Entry], rounds: int = 5) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        extract_items(entries)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def test_sorting_2000_sentences_costs_at_most_15x_sorting_200() -> None:
    small, large = _span(200), _span(2000)
    extract_items(small)  # warm the regex caches outside the timing
    t_small, t_large = _median_seconds(small), _median_seconds(large)
    print(
        f"\nextract_items: {t_small * 1e3:.1f} ms (200 sentences), {t_large * 1e3:.1f} ms "
        f"(2,000), ratio {t_large / t_small:.1f}"
    )
    assert t_large / t_small <= 15


@pytest.mark.parametrize("sentences", [200, 2000])
def test_bench_extractive_summary_of_a_long_span(benchmark: Any, sentences: int) -> None:
    entries = _span(sentences)
    summarizer = ExtractiveSummarizer(max_summary_tokens=2000)
    summary = benchmark(summarizer, entries, "", None)
    assert summarizer.measure.count(summary) <= summarizer.budget(entries)


def _summaries_with_carried_lines(lines: int, per_summary: int = 50) -> list[Entry]:
    """Previous summaries holding ``lines`` distinct prose lines outside any section (each is
    carried verbatim), ``per_summary`` to a summary, then a short span."""
    texts = [
        f"Earlier the {_NOUNS[i % len(_NOUNS)]} work went fine on run {i}." for i in range(lines)
    ]
    summaries = [
        Entry(
            id=f"s{n}",
            blocks=(Text("\n".join(texts[k : k + per_summary])),),
            meta={"summary": True},
        )
        for n, k in enumerate(range(0, lines, per_summary))
    ]
    return [*summaries, *_span(20)]


def test_carrying_20000_summary_lines_costs_at_most_15x_carrying_2000() -> None:
    """The carried lines of previous summaries are deduplicated by a set, not by scanning the
    lines carried so far, which was quadratic. Measured on a loaded 2-core machine: before,
    21.6 ms (2,000) and 2,635 ms (20,000), ratio 122; after, 1.7 ms and 19.8 ms, ratio 11.6."""
    small, large = _summaries_with_carried_lines(2000), _summaries_with_carried_lines(20000)
    assert len(extract_items(large).carried) == 20000
    t_small, t_large = _median_seconds(small), _median_seconds(large)
    print(
        f"\ncarried lines: {t_small * 1e3:.1f} ms (2,000), {t_large * 1e3:.1f} ms (20,000), "
        f"ratio {t_large / t_small:.1f}"
    )
    assert t_large / t_small <= 15
