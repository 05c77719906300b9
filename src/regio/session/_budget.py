"""Budget truth of the engine.

``ceiling = min(window max, model context window) - output reserve - tool schemas - system
overhead``. Sizes are raw estimates from the token counter, corrected by
:class:`regio.tokens.Calibration` per ``provider:model`` (only ever tightened).

Everything that is sent is counted: the tool schemas are the context tools regio offers, the
application's ``extra_tools`` and the tools passed to the last ``Engine.request(tools=...)``
(:attr:`EngineBudget.request_tools`, taken as sent again with the next request until another
request passes others), each rendered in the provider's shape with its hidden framing (the
provider's ``tool_framing``, :func:`regio.tokens.tooldefs.tool_definition_tokens`). They count
in the whole-context trigger and its fixed floor, in overflow recovery, in
:meth:`EngineBudget.ceiling` and in the request's ceiling check. So is text a caller sends
beside the window with every request (a framework's own system prompt that regio does not lay
out, :meth:`EngineBudget.send_beside`): it is part of :attr:`EngineBudget.system_overhead`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from regio.layout import Request, ToolSpec
from regio.providers.registry import tool_framing_for
from regio.regions import Window
from regio.tokens import Calibration
from regio.tokens.tooldefs import tool_definition_tokens

from ._options import EngineOptions
from ._toolspecs import offered_tool_specs

__all__ = ["EngineBudget"]


@attrs.define(eq=False, kw_only=True)
class EngineBudget:
    """Counting and budget truth of one engine (all sizes in tokens): reads the window, the
    options (provider, model, context window, output reserve, application tools) and the
    calibration it corrects estimates with."""

    window: Window
    options: EngineOptions
    calibration: Calibration = attrs.field(factory=Calibration)
    #: The tools passed to the last ``Engine.request(tools=...)`` (counted as sent again).
    request_tools: tuple[ToolSpec, ...] = ()
    #: Tokens of the text the caller sends beside the window (:meth:`send_beside`).
    beside_tokens: int = 0
    #: Most tokens a request laid out so far carried beyond its regions' entries, tool
    #: schemas and overhead (the layout's headings, chunk labels, notices); measured by
    #: :meth:`measure_layout`, reserved by :meth:`reserve`; saved with the engine.
    layout_tokens: int = 0
    #: The (text, separator) ``beside_tokens`` counts (``None`` after a load: counted again).
    _beside: tuple[str, str] | None = attrs.field(default=None, init=False, repr=False)

    # ----- counting and budget truth -----------------------------------------------------
    @property
    def counter(self) -> Any:
        """The token counter (the window's)."""
        return self.window.counter

    def count_text(self, text: str) -> int:
        """Tokens of ``text`` with the engine's counter."""
        return int(self.counter.count(text))

    def tool_specs(self, extra: Iterable[ToolSpec] | None = ()) -> list[ToolSpec]:
        """The offered context tools (``options.context_tools``) followed by the
        application's tools (``extra``; ``None``: :attr:`request_tools`)."""
        offered = offered_tool_specs(self.window, self.options.context_tools, self.options.relief)
        more = self.request_tools if extra is None else tuple(extra)
        return [*offered, *self.options.extra_tools, *more]

    def tools_tokens(self, extra: Iterable[ToolSpec] | None = None, provider: str = "") -> int:
        """Tokens of the tool schemas sent with a request (``extra``: the request's own tools,
        ``None``: :attr:`request_tools`), rendered for ``provider`` (default the engine's)
        with its framing; zero without tools, or for a provider whose API sends none."""
        framing = tool_framing_for(provider or self.options.provider)
        return tool_definition_tokens(self.tool_specs(extra), framing, self.count_text)

    def send_beside(self, text: str, separator: str = "\n\n") -> int:
        """Count ``text`` as sent with every request from now on, beside the window: a system
        prompt the caller adds to regio's payload (as the LangChain middleware sends the
        agent's own system message), with the ``separator`` that joins it to regio's system
        text (``"\n\n"`` in one system message; ``""`` when it goes as a block of its own, as
        in an Anthropic ``system`` list). ``""`` counts nothing. Replaces the text counted
        before; the same text again is not re-tokenized. Returns its tokens."""
        if self._beside != (text, separator):
            self.beside_tokens = self.count_text(text + separator) if text else 0
            self._beside = (text, separator)
        return self.beside_tokens

    @property
    def system_overhead(self) -> int:
        """Per-request tokens sent beside the window content: the chat format's framing
        (system message + reply priming) and the caller's text (:meth:`send_beside`)."""
        overhead = getattr(self.counter, "overhead", None)
        if overhead is None:
            return self.beside_tokens
        return int(overhead.message()) + int(overhead.reply_priming) + self.beside_tokens

    @property
    def limit(self) -> int:
        """``min(window max, model context window - output reserve)`` in tokens."""
        context_window = self.options.context_window
        model_room = (
            context_window - self.options.output_reserve
            if context_window is not None
            else self.window.max_tokens
        )
        return min(self.window.max_tokens, model_room)

    def ceiling(self, extra_tools: Iterable[ToolSpec] | None = None) -> int:
        """Room for window content: :attr:`limit` minus tool schemas (``extra_tools``: the
        request's own; ``None``: :attr:`request_tools`) and system overhead, tokens."""
        return self.limit - self.tools_tokens(extra_tools) - self.system_overhead

    def calibration_key(self, provider: str | None = None, model: str | None = None) -> str:
        """``provider:model`` of the calibration factor in use."""
        options = self.options
        return f"{provider or options.provider}:{(model or options.model) or 'default'}"

    def estimate(self, provider: str | None = None, model: str | None = None) -> int:
        """Raw estimate of the next request: window content + tools (with
        :attr:`request_tools`, rendered for ``provider``) + overhead (tokens)."""
        del model
        tools = self.tools_tokens(None, provider or "")
        return self.window.used_tokens + tools + self.system_overhead

    def calibrated(self, raw: int, provider: str | None = None, model: str | None = None) -> int:
        """``raw`` corrected by the calibration factor (and margin) of ``provider:model``."""
        return self.calibration.correct(self.calibration_key(provider, model), raw)

    def calibrated_ceiling(
        self, raw: int, provider: str | None = None, model: str | None = None
    ) -> int:
        """``raw`` corrected as the request ceiling checks it
        (:meth:`regio.tokens.Calibration.correct_ceiling`: the factor, or the recent reports'
        median when that is higher), tokens."""
        return self.calibration.correct_ceiling(self.calibration_key(provider, model), raw)

    def size(self, provider: str | None = None, model: str | None = None) -> int:
        """Calibrated estimate of the next request (tokens)."""
        return self.calibrated(self.estimate(provider, model), provider, model)

    def reserve(self, provider: str | None = None, model: str | None = None) -> int:
        """Set and return the window's ``reserved_tokens``: the tokens of its ``max_tokens``
        the next request of ``provider`` / ``model`` spends outside the regions (the output
        reserve, tool schemas, system overhead and the calibration's correction), so an
        elastic region's room (:meth:`regio.regions.Window.room_for`) is what a request can
        really carry."""
        key = self.calibration_key(provider, model)
        scale = self.calibration.factor(key) * (1.0 + self.calibration.margin)
        outside = self.tools_tokens(None, provider or "") + self.system_overhead
        room = int(self.limit / max(scale, 1.0)) - outside - self.layout_tokens
        reserved = max(0, self.window.max_tokens - room)
        self.window.reserved_tokens = reserved
        return reserved

    def measure_layout(self, raw: int, provider: str = "") -> int:
        """Keep the most tokens a laid-out request (raw estimate ``raw``, for ``provider``)
        carried beyond the window's entries, its tool schemas and the system overhead
        (:attr:`layout_tokens`); returns that most."""
        tools = self.tools_tokens(None, provider or "")
        extra = raw - self.window.used_tokens - tools - self.system_overhead
        self.layout_tokens = max(self.layout_tokens, extra)
        return self.layout_tokens

    def request_estimate(self, request: Request, provider: str = "") -> int:
        """Raw estimate of ``request``: its blocks, with its tool blocks counted as ``provider``
        (default the engine's) receives them with their framing, plus the system overhead
        (tokens)."""
        specs = [b.tool for b in request.blocks if b.level == "tools" and b.tool is not None]
        if not specs:
            return request.tokens + self.system_overhead
        neutral = sum(b.tokens for b in request.blocks if b.level == "tools")
        framing = tool_framing_for(provider or self.options.provider)
        shaped = tool_definition_tokens(specs, framing, self.count_text)
        return request.tokens - neutral + shaped + self.system_overhead
