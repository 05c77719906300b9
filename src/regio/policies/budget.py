"""Region budgets: absolute tokens or a share of the window, with floor / ceiling clamps.

Budgets are tokens or a percentage of the window (``"12%"``), with optional ``min_tokens`` /
``max_tokens`` clamps (the floor wins).
"""

from __future__ import annotations

import math
import re
from typing import Any

import msgspec

from regio.errors import RegionConfigError

__all__ = ["Budget"]

_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")


class Budget(msgspec.Struct, frozen=True):
    """A region budget.

    Exactly one of ``tokens`` (absolute, in tokens) or ``percent`` (0 < percent <= 100, share of
    the window) is set. ``min_tokens`` / ``max_tokens`` clamp the resolved value; when they
    conflict the floor (``min_tokens``) wins.

    Build one with :meth:`Budget.of` (``Budget.of(2000)``, ``Budget.of("12%", min_tokens=500)``).
    """

    tokens: int | None = None
    percent: float | None = None
    min_tokens: int | None = None
    max_tokens: int | None = None

    @classmethod
    def of(
        cls,
        value: int | str | Budget,
        *,
        min_tokens: int | None = None,
        max_tokens: int | None = None,
    ) -> Budget:
        """Parse ``value``: an int (tokens), a digit string, or a percent string like ``"12%"``.

        Raises :class:`RegionConfigError` for negative numbers, percents outside (0, 100] or
        any other text.
        """
        for label, clamp in (("min_tokens", min_tokens), ("max_tokens", max_tokens)):
            if clamp is not None and (
                not isinstance(clamp, int) or isinstance(clamp, bool) or clamp < 0
            ):
                raise RegionConfigError(f"budget {label} must be a token count >= 0, got {clamp!r}")
        if isinstance(value, Budget):
            if min_tokens is None and max_tokens is None:
                return value
            return Budget(value.tokens, value.percent, min_tokens, max_tokens)
        if isinstance(value, bool):
            raise RegionConfigError(f"budget must be tokens or a percent string, got {value!r}")
        if isinstance(value, int):
            if value < 0:
                raise RegionConfigError(f"budget must be >= 0 tokens, got {value}")
            return cls(tokens=value, min_tokens=min_tokens, max_tokens=max_tokens)
        if isinstance(value, str):
            text = value.strip().replace("_", "").replace(",", "")
            if text.isdigit():
                return cls(tokens=int(text), min_tokens=min_tokens, max_tokens=max_tokens)
            match = _PERCENT.match(text)
            if match:
                pct = float(match.group(1))
                if not 0 < pct <= 100:
                    raise RegionConfigError(f"budget percent must be in (0, 100], got {value!r}")
                return cls(percent=pct, min_tokens=min_tokens, max_tokens=max_tokens)
        raise RegionConfigError(
            f"budget must be a token count (2000) or a share of the window ('12%'), got {value!r}"
        )

    @classmethod
    def coerce(cls, value: int | str | Budget | dict[str, Any]) -> Budget:
        """:meth:`of` that also accepts the dict form produced by ``msgspec.to_builtins``."""
        if isinstance(value, dict):
            return msgspec.convert(value, cls)
        return cls.of(value)

    def resolve(self, window_tokens: int | None = None) -> int:
        """The budget in tokens for a window of ``window_tokens``.

        A percent budget is ``floor(window_tokens * percent / 100)``; then ``max_tokens`` caps it
        and ``min_tokens`` raises it (the floor wins over the cap). Raises
        :class:`RegionConfigError` when a percent budget is resolved without a window size.
        """
        if self.percent is not None:
            if window_tokens is None:
                raise RegionConfigError(
                    f"budget {self.percent:g}% needs the window size: add the region to a Window "
                    "(or give the budget in tokens)"
                )
            value = math.floor(window_tokens * self.percent / 100)
        else:
            value = self.tokens or 0
        if self.max_tokens is not None:
            value = min(value, self.max_tokens)
        if self.min_tokens is not None:
            value = max(value, self.min_tokens)
        return value

    def floor(self, window_tokens: int | None = None) -> int:
        """The smallest this budget can be: ``min_tokens`` when set, else the resolved budget."""
        if self.min_tokens is not None and self.percent is not None and window_tokens is None:
            return self.min_tokens
        return self.resolve(window_tokens)

    def describe(self) -> str:
        """Short human text, e.g. ``"12% (min 500)"`` or ``"2000 tokens"``."""
        base = f"{self.percent:g}%" if self.percent is not None else f"{self.tokens} tokens"
        clamps = []
        if self.min_tokens is not None:
            clamps.append(f"min {self.min_tokens}")
        if self.max_tokens is not None:
            clamps.append(f"max {self.max_tokens}")
        return base + (f" ({', '.join(clamps)})" if clamps else "")
