"""The loop's view of the engine: the handful of :class:`regio.engine.Engine` calls it makes.

Keeping them in one place documents the contract between :mod:`regio.agent` and
:mod:`regio.engine`:

* ``tools()`` -> context tool specs, ``handle_tool_call(name, arguments)`` -> an outcome with
  ``text`` (and ``is_error`` or ``ok``);
* ``add_user(text)``, ``add_message(message)`` (assistant turns and tool results, kept
  block for block; parallel results travel in one ``tool`` message);
* ``request(provider, model, tools=..., max_tokens=...)`` -> ``(Request, payload)``; it
  flushes pending compactions at the turn boundary itself;
* ``recover_overflow(error)``, ``observe(usage)``;
* for :meth:`regio.agent.AgentLoop.arun`, the async twins of the calls that can end in a
  summary: ``aadd_user``, ``aadd_message``, ``arequest``, ``arecover_overflow``,
  ``aadopt_compaction``, ``ahandle_tool_call`` (:mod:`regio.engine._asyncentries`); an engine
  without them gets its sync call (and ``aturn_boundary`` / ``aflush`` before a request);
* ``budget.request_estimate(request)``, ``budget.calibrated(raw, provider, model)``,
  ``window.used_tokens`` and ``limit`` for the step figures.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from regio.content import Message, ToolResult
from regio.layout import Request, ToolSpec

from .tools import UserToolOutcome
from .types import Completion, ProviderUsage

if TYPE_CHECKING:
    from regio.engine import Engine

__all__ = ["EnginePort", "usage_for_engine"]


def usage_for_engine(usage: ProviderUsage, api: str) -> dict[str, Any]:
    """The usage in the provider's own shape, for ``Engine.observe``.

    The provider's raw usage object is passed as recorded (minus llama.cpp ``timings``); when
    there is none (scripted, replayed), it is rebuilt: Anthropic shape (``input_tokens`` net of
    the cache) for the ``anthropic`` API or when cache writes were reported, else Chat
    Completions shape.
    """
    raw = {k: v for k, v in usage.raw.items() if k != "timings"}
    if raw:
        return raw
    if api == "anthropic" or usage.cache_write_tokens:
        return {
            "input_tokens": usage.uncached_tokens,
            "cache_read_input_tokens": usage.cached_tokens,
            "cache_creation_input_tokens": usage.cache_write_tokens,
            "output_tokens": usage.output_tokens,
        }
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
    }


def _compaction_items(completion: Completion) -> list[Any]:
    """The compaction blocks / items of ``completion`` (its raw ``content`` for Anthropic,
    ``output`` for OpenAI Responses)."""
    raw = completion.raw.get("content") or completion.raw.get("output") or []
    items = raw if isinstance(raw, list) else ()
    return [i for i in items if isinstance(i, dict) and i.get("type") == "compaction"]


def _outcome(value: object) -> UserToolOutcome:
    """A :class:`UserToolOutcome` from whatever ``handle_tool_call`` returned."""
    if isinstance(value, str):
        return UserToolOutcome(value)
    text = getattr(value, "text", None)
    if text is None:
        text = getattr(value, "content", None)
    if text is None:
        text = str(value)
    is_error = getattr(value, "is_error", None)
    if is_error is None:
        ok = getattr(value, "ok", True)
        is_error = not ok
    return UserToolOutcome(str(text), bool(is_error))


@attrs.define
class EnginePort:
    """Wraps one engine (see module docstring); ``user_tools`` are sent with every request."""

    engine: Engine
    user_tools: tuple[ToolSpec, ...] = ()
    _flushed: bool = attrs.field(default=False, init=False)

    def register_user_tools(self, specs: Iterable[dict[str, Any]]) -> None:
        """Send these tool definitions (``name``, ``description``, ``input_schema``) with
        every request, after the context tools."""
        self.user_tools = tuple(
            ToolSpec(name=s["name"], description=s["description"], input_schema=s["input_schema"])
            for s in specs
        )

    def context_tool_names(self) -> list[str]:
        """Names of the engine's context tools."""
        return [t.name for t in self.engine.tools()]

    def add_user(self, text: str) -> None:
        """Start a turn with a user message."""
        self.engine.add_user(text)

    async def aadd_user(self, text: str) -> None:
        """:meth:`add_user` awaiting the engine's ``aadd_user``."""
        await self._twin("add_user", text)

    def add_assistant(self, message: Message) -> None:
        """Record the assistant turn block for block (thinking, text, tool_use)."""
        self.engine.add_message(message)

    async def aadd_assistant(self, message: Message) -> None:
        """:meth:`add_assistant` awaiting the engine's ``aadd_message``."""
        await self._twin("add_message", message)

    async def _twin(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """The engine's async twin ``a<name>`` awaited, or its sync ``name`` when it has none."""
        twin = getattr(self.engine, f"a{name}", None)
        if twin is not None:
            return await twin(*args, **kwargs)
        return getattr(self.engine, name)(*args, **kwargs)

    def adopt_compactions(self, completion: Completion, api: str) -> None:
        """Hand every compaction block / item the provider returned in ``completion`` (its
        raw ``content`` for Anthropic, ``output`` for OpenAI Responses) to
        ``Engine.adopt_compaction`` (:mod:`regio.compaction._delegation`); call it before
        :meth:`add_assistant`."""
        for item in _compaction_items(completion):
            self.engine.adopt_compaction(api, item)

    async def aadopt_compactions(self, completion: Completion, api: str) -> None:
        """:meth:`adopt_compactions` awaiting the engine's ``aadopt_compaction``."""
        for item in _compaction_items(completion):
            await self._twin("adopt_compaction", api, item)

    def add_tool_results(self, results: Sequence[ToolResult]) -> None:
        """Record the results of one turn's tool calls in one ``tool`` message."""
        if results:
            self.engine.add_message(Message.tool(tuple(results)))

    async def aadd_tool_results(self, results: Sequence[ToolResult]) -> None:
        """:meth:`add_tool_results` awaiting the engine's ``aadd_message``."""
        if results:
            await self._twin("add_message", Message.tool(tuple(results)))

    def request(
        self, api: str, model: str, max_tokens: int | None = None
    ) -> tuple[Request, dict[str, Any]]:
        """Assemble and render the next request (the engine flushes at the turn boundary)."""
        kwargs: dict[str, Any] = {"tools": self.user_tools, "max_tokens": max_tokens}
        if self._flushed:
            kwargs["flush"] = False  # aflush already ran this turn boundary's flush
            self._flushed = False
        result: tuple[Request, dict[str, Any]] = self.engine.request(api, model, **kwargs)
        return result

    async def arequest(
        self, api: str, model: str, max_tokens: int | None = None
    ) -> tuple[Request, dict[str, Any]]:
        """:meth:`request` awaiting the engine's ``arequest`` (turn-boundary flush and a
        compaction to the ceiling with an async summarizer); an engine without it gets
        :meth:`aflush` then its sync ``request``."""
        arequest = getattr(self.engine, "arequest", None)
        if arequest is None:
            await self.aflush(api, model)
            return self.request(api, model, max_tokens)
        kwargs: dict[str, Any] = {"tools": self.user_tools, "max_tokens": max_tokens}
        result: tuple[Request, dict[str, Any]] = await arequest(api, model, **kwargs)
        return result

    def request_tokens(self, request: Request, api: str = "") -> int:
        """The engine's estimate of ``request`` with its tools counted as ``api`` receives them
        (tokens; default the engine's provider)."""
        return int(self.engine.budget.request_estimate(request, api))

    def calibrated_tokens(self, raw: int, api: str, model: str) -> int:
        """``raw`` corrected by the engine's calibration from reported usage (tokens)."""
        return int(self.engine.budget.calibrated(raw, api, model))

    def window_state(self) -> tuple[int, int]:
        """``(tokens used by the window, the engine's limit)``."""
        return int(self.engine.window.used_tokens), int(self.engine.limit)

    def flush(self) -> None:
        """Flush pending compactions (a turn boundary)."""
        self.engine.flush()

    async def aflush(self, api: str, model: str) -> None:
        """Async twin of the turn-boundary flush of :meth:`request`: awaits the engine's
        ``aturn_boundary(api, model)`` (whole-context trigger, async summarizer) and makes the
        next :meth:`request` skip its own flush; engines without it get ``aflush()`` (or
        ``flush()``)."""
        boundary = getattr(self.engine, "aturn_boundary", None)
        if boundary is not None:
            await boundary(api, model)
            self._flushed = True
            return
        aflush = getattr(self.engine, "aflush", None)
        if aflush is not None:
            await aflush()
        else:
            self.engine.flush()

    def recover_overflow(self, error: Exception) -> Any:
        """Hand a length refusal to the engine (compacts, or raises on a second refusal)."""
        return self.engine.recover_overflow(error)

    async def arecover_overflow(self, error: Exception) -> Any:
        """:meth:`recover_overflow` awaiting the engine's ``arecover_overflow``."""
        return await self._twin("recover_overflow", error)

    def observe(self, completion: Completion, api: str) -> None:
        """Report the call's usage to the engine (calibration, ledger)."""
        self.engine.observe(usage_for_engine(completion.usage, api))

    def handle_tool_call(self, name: str, arguments: dict[str, Any]) -> UserToolOutcome:
        """Run a context tool; refusals come back as instructive text."""
        return _outcome(self.engine.handle_tool_call(name, arguments))

    async def ahandle_tool_call(self, name: str, arguments: dict[str, Any]) -> UserToolOutcome:
        """Async twin of :meth:`handle_tool_call` (the engine's async twin when it has one)."""
        handler = getattr(self.engine, "ahandle_tool_call", None)
        if handler is not None:
            return _outcome(await handler(name, arguments))
        return self.handle_tool_call(name, arguments)
