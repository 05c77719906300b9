"""Budget truth of the engine.

``ceiling = min(window max, model context window) - output reserve - tool schemas - system
overhead``. Sizes are raw estimates from the token counter, corrected by
:class:`regio.tokens.Calibration` per ``provider:model`` (only ever tightened).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs
import msgspec

from regio.layout import Request, ToolSpec
from regio.regions import Window
from regio.tokens import Calibration

from .options import EngineOptions
from .tools import offered_tool_specs

__all__ = ["EngineBudget"]


@attrs.define(eq=False, kw_only=True)
class EngineBudget:
    """Counting and budget truth of one engine (all sizes in tokens): reads the window, the
    options (provider, model, context window, output reserve, application tools) and the
    calibration it corrects estimates with."""

    window: Window
    options: EngineOptions
    calibration: Calibration = attrs.field(factory=Calibration)

    # ----- counting and budget truth -----------------------------------------------------
    @property
    def counter(self) -> Any:
        """The token counter (the window's)."""
        return self.window.counter

    def count_text(self, text: str) -> int:
        """Tokens of ``text`` with the engine's counter."""
        return int(self.counter.count(text))

    def tool_specs(self, extra: Iterable[ToolSpec] = ()) -> list[ToolSpec]:
        """The offered context tools (``options.context_tools``) followed by the
        application's tools."""
        offered = offered_tool_specs(self.window, self.options.context_tools, self.options.relief)
        return [*offered, *self.options.extra_tools, *extra]

    def tools_tokens(self, extra: Iterable[ToolSpec] = ()) -> int:
        """Tokens of the tool schemas sent with every request (never zero when there
        are tools)."""
        total = 0
        for t in self.tool_specs(extra):
            text = msgspec.json.encode([t.name, t.description, t.canonical_schema()]).decode()
            total += self.count_text(text)
        return total

    @property
    def system_overhead(self) -> int:
        """Per-request framing tokens of the chat format (system message + reply priming)."""
        overhead = getattr(self.counter, "overhead", None)
        if overhead is None:
            return 0
        return int(overhead.message()) + int(overhead.reply_priming)

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

    def ceiling(self, extra_tools: Iterable[ToolSpec] = ()) -> int:
        """Room for window content: :attr:`limit` minus tool schemas and system overhead."""
        return self.limit - self.tools_tokens(extra_tools) - self.system_overhead

    def calibration_key(self, provider: str | None = None, model: str | None = None) -> str:
        """``provider:model`` of the calibration factor in use."""
        options = self.options
        return f"{provider or options.provider}:{(model or options.model) or 'default'}"

    def estimate(self, provider: str | None = None, model: str | None = None) -> int:
        """Raw estimate of the next request: window content + tools + overhead (tokens)."""
        del provider, model
        return self.window.used_tokens + self.tools_tokens() + self.system_overhead

    def calibrated(self, raw: int, provider: str | None = None, model: str | None = None) -> int:
        """``raw`` corrected by the calibration factor (and margin) of ``provider:model``."""
        return self.calibration.correct(self.calibration_key(provider, model), raw)

    def size(self, provider: str | None = None, model: str | None = None) -> int:
        """Calibrated estimate of the next request (tokens)."""
        return self.calibrated(self.estimate(provider, model), provider, model)

    def request_estimate(self, request: Request) -> int:
        """Raw estimate of ``request``: its blocks plus the system overhead (tokens)."""
        return request.tokens + self.system_overhead
