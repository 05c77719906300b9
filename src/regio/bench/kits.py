"""regio on third-party compaction suites, through their own plug-in protocols.

* :class:`KitCompactor` is a compactor of compaction-conformance-kit
  (``compact(turns, round_num=1, budget_chars=None) -> CompactedContext``): run it with the
  kit's own runner, ``compaction-kit check regio.bench.kits:KitCompactor`` or
  ``run_conformance(build_seeded_session(), KitCompactor())``.
* :func:`jev_strategy` is a simulated-mode strategy of jev-harness-sdk's compaction survival
  (``Strategy(name, summarize, description)``, ``summarize(messages) -> messages``), for
  ``jev_harness.modules.compaction_survival.sim.run_strategy``.

Both drive an :class:`regio.engine.Engine` built from a blueprint (default:
``examples/blueprints/assistant.yaml``, the docs' recommendation for sessions whose
instructions must survive, found by :func:`assistant_blueprint`) with the extractive
summarizer, offline. A turn the suite gives becomes what it is for an agent: the kit's first
``system`` turn is the system prompt (the pinned ``system`` region); every other turn a
message of the conversation (a ``system`` turn after the first is context the agent was
handed, so it is a user message and is summarized like the rest). jev-harness's ``system``
messages are instruction files (``CLAUDE.md``, rules): they are given as user messages too,
so their codewords must survive summarization (pinned, they would trivially stay). Each round is
``Engine.compact(keep_tokens=0, target_tokens=...)``: everything but the protected newest
user message is summarized, and with a character budget the window is then brought to it
(stored summaries merged, lowest-priority items dropped last; the token target is lowered
until the rendered text fits the characters). The context returned is the request regio
would send, as plain text (``Engine.request(provider="text")``, without the closing
``Assistant:`` cue).

**Rounds.** The suites compact their own output again, as a repeated ``/compact`` does. When
round ``k + 1`` hands back exactly the context round ``k`` returned, the adapter continues the
same session, as an agent's next ``/compact`` would: the engine is saved and loaded again (a
restart, so the items must survive persistence byte for byte) and compacted again. Anything
else starts a fresh session from the turns.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from regio.blueprint import Blueprint, load_blueprint
from regio.engine import Engine
from regio.summarizers import ExtractiveSummarizer

__all__ = ["KitCompactor", "KitSession", "assistant_blueprint", "jev_strategy"]

#: Most times the token target is lowered to fit a character budget.
MAX_FIT_PASSES = 24
_CUE = "\n\nAssistant:"


def assistant_blueprint() -> Path:
    """``examples/blueprints/assistant.yaml``, found by walking up from this module (the
    repository root of a clone or an editable install). Raises :class:`FileNotFoundError`
    naming the fix when it is not there (``examples/`` is not part of the installed
    package)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "examples" / "blueprints" / "assistant.yaml"
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"examples/blueprints/assistant.yaml not found above {here.parent}: it ships with the "
        "source repository; run from a clone or pass blueprint= (a path, YAML text or a "
        "Blueprint)"
    )


def _blueprint(source: str | Path | Blueprint | None) -> Blueprint:
    if source is None:
        return load_blueprint(assistant_blueprint())
    return source if isinstance(source, Blueprint) else load_blueprint(source)


@attrs.define
class KitSession:
    """One session of an adapter: the engine and the context it last returned."""

    blueprint: Blueprint
    engine: Engine | None = None
    last: str | None = None

    #: The first ``system`` turn is the system prompt (else every turn is a message).
    system_prompt: bool = True

    def fresh(self, turns: Sequence[tuple[str, str]]) -> Engine:
        """A new engine holding ``turns`` (``(role, text)``; module doc)."""
        engine = Engine.from_blueprint(self.blueprint, summarizer=ExtractiveSummarizer())
        system = next((r.name for r in engine.window.regions if r.kind == "pinned"), None)
        for index, (role, text) in enumerate(turns):
            first = role == "system" and index == 0 and self.system_prompt
            if first and system is not None:
                engine.write(system, text)
            elif role == "assistant":
                engine.add_assistant(text, [])
            else:
                engine.add_user(text)
        return engine

    def resumed(self, engine: Engine) -> Engine:
        """``engine`` saved and loaded again (a restart between two compactions)."""
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "session.json"
            engine.save(path)
            return Engine.load(path, summarizer=ExtractiveSummarizer())

    def render(self, engine: Engine) -> str:
        """The request ``engine`` would send, as plain text, without the closing cue."""
        _, payload = engine.request(provider="text")
        prompt = str(payload["prompt"])
        return prompt[: -len(_CUE)] if prompt.endswith(_CUE) else prompt

    def compact(
        self,
        turns: Sequence[tuple[str, str]],
        budget_chars: int | None = None,
        continues: bool = False,
    ) -> str:
        """One round (module doc): the compacted context as text, at most ``budget_chars``
        characters when the window can be brought that small."""
        if continues and self.engine is not None and [t for _, t in turns] == [self.last]:
            engine = self.resumed(self.engine)
        else:
            engine = self.fresh(turns)
        target = None
        if budget_chars is not None:
            # characters per token of this session's text, from the window before compacting
            before = self.render(engine)
            per_token = len(before) / max(1, engine.window.used_tokens)
            target = max(0, int(budget_chars / max(per_token, 1.0)))
        engine.compact(keep_tokens=0, target_tokens=target)
        text = self.render(engine)
        for _ in range(MAX_FIT_PASSES):
            if budget_chars is None or target is None or len(text) <= budget_chars:
                break
            if target == 0:
                break
            target = min(target - 1, target * budget_chars // max(len(text), 1))
            engine.compact(keep_tokens=0, target_tokens=max(0, target))
            text = self.render(engine)
        self.engine, self.last = engine, text
        return text


class KitCompactor:
    """A compaction-conformance-kit compactor (module doc). ``blueprint``: a path, YAML text
    or :class:`regio.blueprint.Blueprint` (default :func:`assistant_blueprint`)."""

    name = "regio"

    def __init__(self, blueprint: str | Path | Blueprint | None = None) -> None:
        self.session = KitSession(_blueprint(blueprint))

    def compact(
        self, turns: Sequence[Any], round_num: int = 1, budget_chars: int | None = None
    ) -> Any:
        """The kit's protocol: ``turns`` (``role``, ``text``) -> ``CompactedContext``.
        Raises ``ImportError`` without compaction-conformance-kit installed."""
        from compaction_kit import CompactedContext

        pairs = [(str(t.role), str(t.text)) for t in turns]
        text = self.session.compact(pairs, budget_chars, continues=round_num > 1)
        return CompactedContext(text=text, compactor_name=self.name, round_num=round_num)


def jev_strategy(blueprint: str | Path | Blueprint | None = None) -> Any:
    """A jev-harness-sdk simulated-mode ``Strategy`` running regio (module doc); its
    ``summarize`` maps the session's messages to the context regio returns, as one
    ``system`` message. Raises ``ImportError`` without jev-harness-sdk installed."""
    from jev_harness.modules.compaction_survival.sim import Message, Strategy

    session = KitSession(_blueprint(blueprint), system_prompt=False)

    def summarize(context: list[Any]) -> list[Any]:
        pairs = [(str(m.role), str(m.text)) for m in context]
        text = session.compact(pairs, continues=True)
        return [Message("system", text)]

    apply: Callable[[list[Any]], list[Any]] = summarize
    return Strategy(
        "regio",
        apply,
        "regio's engine with the extractive summarizer: durable items kept verbatim by "
        "subject, prose for the rest",
        deterministic=True,
    )
