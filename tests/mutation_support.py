"""Hostile values and structural mutations of JSON trees, shared by the input fuzzers
(SDK responses, streamed turns, tool arguments), with their settings and engine.

``hostile_text``: any text, lone UTF-16 surrogates and surrogate pairs included (hypothesis'
default alphabet leaves surrogates out). ``hostile_json``: JSON-like values of every type a
decoder or an SDK can hand over (None, bools, huge integers, NaN and infinities, hostile text,
lists, dicts, values nested 300 deep). :func:`mutate` applies picks ``(where, action, value)``
to a deep copy of a tree: replace the node at ``where`` (a fraction of the node list), delete
it, or wrap it in a list.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from regio.blueprint import load_blueprint

#: A pinned system prompt and a conversation: the engine the input fuzzers feed.
CONVERSATION_BLUEPRINT = load_blueprint(
    """
version: 1
name: fuzzed
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 1000, seed: "Be brief."}
  - {name: conversation, kind: sliding_window, budget: 20000}
"""
)


def fuzz_settings(default: int) -> Any:
    """Hypothesis settings of an input fuzzer: ``REGIO_FUZZ_EXAMPLES`` examples (``default``
    in CI), no deadline, large hostile values allowed."""
    return settings(
        max_examples=int(os.environ.get("REGIO_FUZZ_EXAMPLES", str(default))),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


#: Every code point, surrogates (category Cs) included.
any_character = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, categories=None)
surrogate = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)

hostile_text = st.one_of(
    st.text(any_character, max_size=12),
    st.builds(
        lambda head, s, tail: head + s + tail,
        st.text(max_size=6),
        st.text(surrogate, min_size=1, max_size=3),
        st.text(max_size=6),
    ),
)


def _deep(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


hostile_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | hostile_text
    | st.builds(_deep, st.sampled_from([70, 250]))
    | st.sampled_from(["", " ", -1, 0, 2**63])
)

hostile_json = st.recursive(
    hostile_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_text, inner, max_size=3),
    max_leaves=6,
)

ACTIONS = ("replace", "delete", "wrap")

mutation_picks = st.lists(
    st.tuples(st.floats(0.0, 1.0), st.sampled_from(ACTIONS), hostile_json),
    min_size=1,
    max_size=3,
)


#: Deepest path :func:`paths` lists (the valid trees are about 8 deep; a hostile value nested
#: hundreds deep is replaced or wrapped whole, never walked).
MAX_PATH_DEPTH = 16


def paths(node: Any) -> list[tuple[Any, ...]]:
    """Every path below ``node`` (dict keys and list indexes) up to :data:`MAX_PATH_DEPTH`
    deep, parents before children (iterative: values nested hundreds deep are fine)."""
    found: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(node, ())]
    while stack:
        item, prefix = stack.pop(0)
        if prefix:
            found.append(prefix)
        if len(prefix) >= MAX_PATH_DEPTH:
            continue
        if isinstance(item, dict):
            stack.extend((value, (*prefix, key)) for key, value in item.items())
        elif isinstance(item, list):
            stack.extend((value, (*prefix, index)) for index, value in enumerate(item))
    return found


def mutate(tree: Any, picks: list[tuple[float, str, Any]]) -> Any:
    """A deep copy of ``tree`` with ``picks`` applied in turn (module doc)."""
    tree = copy.deepcopy(tree)
    for where, action, value in picks:
        found = paths(tree)
        if not found:
            return value if action == "replace" else tree
        path = found[int(where * (len(found) - 1))]
        parent: Any = tree
        for key in path[:-1]:
            parent = parent[key]
        if action == "delete":
            del parent[path[-1]]
        elif action == "wrap":
            parent[path[-1]] = [parent[path[-1]]]
        else:
            parent[path[-1]] = value
    return tree
