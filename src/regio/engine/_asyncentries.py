"""The engine's async entries: one ``a``-prefixed twin for every public call that can end in a
summary (:class:`AsyncEntries`, a base class of :class:`regio.engine.Engine`).

Each such call is one step generator (:data:`regio.compaction._compactor.Steps`) that yields its
summarizer jobs: :func:`regio.engine._messages.admit_steps` (``add_*``),
:func:`regio.compaction._writes.write_steps` (``write`` / ``append``),
:func:`regio.engine._requests.request_steps` (``request``),
:func:`regio.engine._recovery.recover_steps` (``recover_overflow``),
:func:`regio.engine._tools.tool_steps` (``handle_tool_call``),
:func:`regio.compaction._delegation.adopt_steps` (``adopt_compaction``) and the flushes of
:mod:`regio.compaction._flushes` (``flush``, ``compact``, the turn boundary). The sync entry
drives it with :meth:`Session.run`, the async one here awaits :meth:`Session.arun`; both
build their generator with the same step function (or the shared builders below, for the
calls that prepare arguments), so the two differ only in the driver, and no path reaches the
summarizer except through the driver the caller chose. An async
summarizer called through a sync entry is refused (a ``compaction_rejected`` event, reason
``error``): use the twin here.

Usage::

    engine = Engine.from_blueprint("agent.yaml", summarizer=my_async_summarizer)
    await engine.aadd_user("Fix the failing test")
    request, payload = await engine.arequest("anthropic", "claude-sonnet-4-5")
    await engine.aadd_tool_result("call-1", big_output)   # may compact, awaiting the summarizer
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from regio.compaction import _flushes as flushing
from regio.compaction._compactor import arun_steps
from regio.compaction._delegation import adopt_steps
from regio.compaction._writes import write_steps
from regio.content import Block, Entry, Message, Text, Thinking, ToolResult, ToolUse
from regio.events import EventBus, atransactional
from regio.layout import Request
from regio.regions import Refusal, WriteResult
from regio.sdk._objects import response_message, tool_specs, usage_of
from regio.session._session import CompactionResult, Session, Steps
from regio.session._usage import UsageRecord, normalize_usage

from ._messages import admit_steps
from ._recovery import RetryToken, recover_steps
from ._requests import request_steps
from ._tools import ContextToolOutcome, tool_steps

if TYPE_CHECKING:
    from regio.session._budget import EngineBudget
    from regio.session._state import SessionState

__all__ = ["AsyncEntries", "tool_message", "user_message"]


def user_message(text: str | Sequence[Block]) -> Message:
    """The user message of ``add_user`` / ``aadd_user``: ``text`` as one text block, or the
    blocks as given."""
    return Message("user", (Text(text),) if isinstance(text, str) else tuple(text))


def tool_message(
    tool_use_id: str,
    content: str,
    is_error: bool = False,
    final: bool = True,
    media: Sequence[Any] = (),
) -> Message:
    """The ``tool`` message of ``add_tool_result`` / ``aadd_tool_result``."""
    return Message.tool((ToolResult(tool_use_id, content, is_error, final, tuple(media)),))


class AsyncEntries:
    """The async twins of the engine's summarizing calls and the step builders both share
    (module doc). Each twin takes the arguments of its sync entry, returns the same value and
    raises the same errors; each is one event transaction, as its sync entry."""

    session: Session
    budget: EngineBudget
    state: SessionState

    if TYPE_CHECKING:

        @property
        def events(self) -> EventBus: ...

        def observe(
            self, usage: object, *, provider: str | None = None, model: str | None = None
        ) -> UsageRecord: ...

    # ----- step builders (shared with the sync entries) ----------------------------------
    def _message_steps(
        self, message: Message, tokens: int | None, observation: bool = False
    ) -> Steps[Entry]:
        return admit_steps(self.session, self.state, message, tokens, observation)

    def _request_steps(
        self,
        provider: str | None,
        model: str | None,
        tools: Sequence[Any],
        api: str | None,
        max_tokens: int | None,
        flush: bool,
        extra: dict[str, Any],
    ) -> Steps[tuple[Request, dict[str, Any]]]:
        specs = self.budget.request_tools = tuple(tool_specs(tools))  # counted from here on
        options = self.session.options
        return request_steps(
            self.session,
            self.budget,
            self.state,
            provider or options.provider,
            model or options.model,
            tools=specs,
            api=api,
            max_tokens=max_tokens,
            flush=flush,
            extra=extra,
        )

    def _boundary_steps(
        self, provider: str | None, model: str | None
    ) -> Steps[CompactionResult | None]:
        options = self.session.options
        return flushing.boundary_steps(
            self.session, self.budget, provider or options.provider, model or options.model
        )

    # ----- writes ------------------------------------------------------------------------
    @atransactional
    async def awrite(
        self,
        region: str,
        content: Entry | str | Block | Sequence[Block],
        *,
        key: str | None = None,
        strict: bool = False,
    ) -> WriteResult | Refusal:
        """``Engine.write`` awaiting an async summarizer for the room it makes."""
        steps = write_steps(self.session, region, content, key=key, strict=strict)
        return await arun_steps(self.session, steps)

    async def aappend(
        self, region: str, content: str | Block | Sequence[Block], *, strict: bool = False
    ) -> WriteResult | Refusal:
        """``Engine.append`` awaiting an async summarizer (:meth:`awrite`)."""
        return await self.awrite(region, content, strict=strict)

    # ----- conversation ------------------------------------------------------------------
    @atransactional
    async def aadd_message(
        self, message: Message, *, tokens: int | None = None, observation: bool = False
    ) -> Entry:
        """``Engine.add_message`` awaiting an async summarizer when the message makes room by
        compaction."""
        return await arun_steps(self.session, self._message_steps(message, tokens, observation))

    async def aadd_user(
        self, text: str | Sequence[Block], *, tokens: int | None = None, observation: bool = False
    ) -> Entry:
        """``Engine.add_user`` (:meth:`aadd_message`)."""
        return await self.aadd_message(user_message(text), tokens=tokens, observation=observation)

    async def aadd_observation(
        self, text: str | Sequence[Block], *, tokens: int | None = None
    ) -> Entry:
        """``Engine.add_observation`` (:meth:`aadd_message`)."""
        return await self.aadd_user(text, tokens=tokens, observation=True)

    async def aadd_assistant(
        self,
        text: str = "",
        tool_calls: Sequence[ToolUse] = (),
        *,
        thinking: Sequence[Thinking] = (),
        tokens: int | None = None,
    ) -> Entry:
        """``Engine.add_assistant`` (:meth:`aadd_message`)."""
        message = Message.assistant(text, tool_calls, thinking)
        return await self.aadd_message(message, tokens=tokens)

    async def aadd_tool_result(
        self,
        tool_use_id: str,
        content: str,
        *,
        is_error: bool = False,
        tokens: int | None = None,
        final: bool = True,
        media: Sequence[Any] = (),
    ) -> Entry:
        """``Engine.add_tool_result`` (:meth:`aadd_message`)."""
        message = tool_message(tool_use_id, content, is_error, final, media)
        return await self.aadd_message(message, tokens=tokens)

    async def aadd_response(self, response: object, *, observe: bool = False) -> Entry:
        """``Engine.add_response`` (:meth:`aadd_message`)."""
        message, usage = response_message(response)
        if observe:  # the usage is read first, so a usage it cannot read stores nothing
            normalize_usage(usage := usage_of(usage))
        entry = await self.aadd_message(message)
        if observe:
            self.observe(usage)
        return entry

    # ----- requests ----------------------------------------------------------------------
    @atransactional
    async def arequest(
        self,
        provider: str | None = None,
        model: str | None = None,
        *,
        tools: Sequence[Any] = (),
        api: str | None = None,
        max_tokens: int | None = None,
        flush: bool = True,
        **extra: Any,
    ) -> tuple[Request, dict[str, Any]]:
        """``Engine.request`` awaiting an async summarizer for the turn-boundary flush and a
        compaction to the ceiling."""
        steps = self._request_steps(provider, model, tools, api, max_tokens, flush, extra)
        return await arun_steps(self.session, steps)

    @atransactional
    async def aturn_boundary(
        self, provider: str | None = None, model: str | None = None
    ) -> CompactionResult | None:
        """The flush :meth:`arequest` runs at a turn boundary (whole-context trigger measured
        for ``provider`` / ``model``, default the engine's; tolerated bulk fallback), awaiting an
        async summarizer. Returns what was done, or ``None`` when nothing was pending. Raises
        :class:`CompactionNoProgressError` as ``Engine.request`` does."""
        return await arun_steps(self.session, self._boundary_steps(provider, model))

    @atransactional
    async def arecover_overflow(self, error: object) -> RetryToken | None:
        """``Engine.recover_overflow`` awaiting an async summarizer for its compaction."""
        steps = recover_steps(self.session, self.budget, self.state, error)
        return await arun_steps(self.session, steps)

    # ----- compaction --------------------------------------------------------------------
    @atransactional
    async def aflush(self) -> CompactionResult | None:
        """``Engine.flush`` awaiting an async summarizer."""
        return await arun_steps(self.session, flushing.queued_steps(self.session))

    @atransactional
    async def acompact(
        self,
        instructions: str | None = None,
        *,
        keep_tokens: int | None = None,
        keep_messages: int | None = None,
        keep_fraction: float | None = None,
        target_tokens: int | None = None,
    ) -> CompactionResult | None:
        """``Engine.compact`` awaiting an async summarizer."""
        limits = (keep_tokens, keep_messages, keep_fraction, target_tokens)
        steps = flushing.manual_steps(self.session, instructions, *limits)
        return await arun_steps(self.session, steps)

    @atransactional
    async def aadopt_compaction(self, api: str, item: object) -> CompactionResult | None:
        """``Engine.adopt_compaction`` awaiting an async summarizer."""
        return await arun_steps(self.session, adopt_steps(self.session, api, item))

    # ----- tools -------------------------------------------------------------------------
    @atransactional
    async def ahandle_tool_call(self, name: str, arguments: object) -> ContextToolOutcome:
        """``Engine.handle_tool_call`` awaiting an async summarizer when a write makes room."""
        return await arun_steps(self.session, tool_steps(self.session, name, arguments))
