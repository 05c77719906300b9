"""Calibration of token estimates from provider-reported prompt tokens.

A local count (a heuristic, or tiktoken standing in for another vendor's tokenizer) drifts from
what the provider bills. After each request the runtime calls :meth:`Calibration.observe` with
the estimate it made and the ``prompt_tokens`` / ``input_tokens`` the provider reported; later
estimates for the same provider and model are scaled by the learned factor.

Rule (counts are corrected from reported usage, only ever tightened, and only on consistent
evidence: one wild report must not poison a session):

* each observation's ratio ``r = reported / estimated`` is **bounded**: over-count evidence
  (``r < 1``) counts as 1.0 (an estimate is never deliberately lowered) and ``r`` above
  ``max_ratio`` (default 4.0) counts as ``max_ratio``;
* the evidence is the **median** of the last ``window`` (default 5) bounded ratios, so one
  outlier after two or more equal reports does not move the factor at all;
* the first observation sets the factor to that median, later ones move it as an exponential
  moving average toward it, ``f += smoothing * (median - f)``;
* every step is **bounded**: one observation multiplies or divides the factor by at most
  ``1 + max_step`` (default 1.0: at most doubled or halved), and the factor always stays in
  ``[1.0, max_ratio]``;
* an optional ``margin`` (0.05 = 5%) is added on top; each provider and model keeps its own
  factor;
* a hard limit (the request ceiling) is checked with :meth:`Calibration.ceiling_factor`: the
  factor, or (from the third report on) the median of the last three bounded ratios when that
  is higher, so a ratio that
  keeps rising is followed within a report or two instead of the moving average's lag.

Examples: 100,000 estimated and 122,000 reported give 1.22 after one report. A single report
of 250,000 tokens for a 694-token estimate (ratio 360) moves a fresh factor to 2.0, not 360;
an established factor of 1.1 learned from two or more reports of 1.1 does not move at all.
A saved factor outside ``[1.0, max_ratio]`` is corrupt (:meth:`Calibration.from_state`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

import attrs
import msgspec

from regio.errors import RegioError

__all__ = [
    "CEILING_EVIDENCE",
    "Calibration",
    "CalibrationKey",
    "CalibrationRecord",
    "CalibrationResetWarning",
    "CalibrationState",
    "CalibrationStateError",
    "calibration_key",
]

CalibrationKey = str | tuple[str, str]

#: Reports whose median can raise the factor a hard limit is checked with
#: (:meth:`Calibration.ceiling_factor`).
CEILING_EVIDENCE = 3


def calibration_key(key: CalibrationKey) -> str:
    """Normalize a key: ``("anthropic", "claude-sonnet-4")`` -> ``"anthropic:claude-sonnet-4"``.

    A string is used as given. Raises ``ValueError`` for an empty key.
    """
    if isinstance(key, tuple):
        provider, model = key
        text = f"{provider}:{model}"
        if not provider or not model:
            raise ValueError(f"calibration key {key!r} needs both a provider and a model")
        return text
    if not key:
        raise ValueError("calibration key is empty; use 'provider:model'")
    return key


class CalibrationRecord(msgspec.Struct):
    """What has been learned for one key.

    ``factor`` (in ``[1.0, max_ratio]``) scales estimates; ``observations`` counts reports;
    ``last_ratio`` is the latest raw ``reported / estimated``; ``last_estimated`` /
    ``last_reported`` are in tokens; ``recent`` holds the last bounded ratios (the median's
    window, oldest first).
    """

    factor: float
    observations: int
    last_ratio: float
    last_estimated: int
    last_reported: int
    recent: list[float] = msgspec.field(default_factory=list)


class CalibrationState(msgspec.Struct):
    """The serializable form of a :class:`Calibration` (JSON / msgpack via msgspec)."""

    smoothing: float
    margin: float
    records: dict[str, CalibrationRecord] = msgspec.field(default_factory=dict)
    max_ratio: float = 4.0
    max_step: float = 1.0
    window: int = 5


class CalibrationStateError(RegioError, ValueError):
    """A saved calibration is corrupt (the message names the key, the value and the range)."""


class CalibrationResetWarning(UserWarning):
    """A loaded calibration record was out of range and was reset (it is learned again)."""


def _check_smoothing(_instance: object, _attribute: object, value: float) -> None:
    if not 0.0 < value <= 1.0:
        raise ValueError(f"Calibration smoothing must be in (0, 1], got {value}")


def _check_margin(_instance: object, _attribute: object, value: float) -> None:
    if not 0.0 <= value < 1.0 or math.isnan(value):
        raise ValueError(f"Calibration margin must be in [0, 1) (0.05 = 5%), got {value}")


def _check_max_ratio(_instance: object, _attribute: object, value: float) -> None:
    if not 1.0 <= value <= 1_000.0:
        raise ValueError(f"Calibration max_ratio must be in [1, 1000], got {value}")


def _check_max_step(_instance: object, _attribute: object, value: float) -> None:
    if not 0.0 < value <= 10.0:
        raise ValueError(f"Calibration max_step must be in (0, 10] (1.0 = x2), got {value}")


def _check_window(_instance: object, _attribute: object, value: int) -> None:
    if not 1 <= value <= 1_000:
        raise ValueError(f"Calibration window must be 1..1000 observations, got {value}")


def _copy(record: CalibrationRecord) -> CalibrationRecord:
    return msgspec.structs.replace(record, recent=list(record.recent))


def _in_range(value: float, high: float) -> bool:
    return math.isfinite(value) and 1.0 <= value <= high


def _record_problem(record: CalibrationRecord, high: float) -> str | None:
    """Why ``record`` is not a record :meth:`Calibration.observe` could have made, or None."""
    if not _in_range(record.factor, high):
        return f"factor {record.factor} is out of range"
    bad = [r for r in record.recent if not _in_range(r, high)]
    if bad:
        return f"recent ratio {bad[0]} is out of range"
    if record.observations < 0 or record.last_estimated < 0 or record.last_reported < 0:
        return "negative counts"
    return None


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


@attrs.define(eq=False)
class Calibration:
    """Per-(provider, model) correction factors learned from reported usage (module doc).

    ``smoothing`` is the weight of new evidence in the moving average (0 < s <= 1);
    ``margin`` is a safety margin added to every corrected estimate (0.05 = +5%);
    ``max_ratio`` bounds each observation and the factor (1..1000); ``max_step`` bounds the
    relative move per observation (1.0: at most x2 or /2); ``window`` is the number of
    recent observations whose median is the evidence. Raises ``ValueError`` for a setting out
    of its range.
    """

    smoothing: float = attrs.field(default=0.3, validator=_check_smoothing)
    margin: float = attrs.field(default=0.0, validator=_check_margin)
    max_ratio: float = attrs.field(default=4.0, validator=_check_max_ratio, kw_only=True)
    max_step: float = attrs.field(default=1.0, validator=_check_max_step, kw_only=True)
    window: int = attrs.field(default=5, validator=_check_window, kw_only=True)
    _records: dict[str, CalibrationRecord] = attrs.field(factory=dict, init=False)

    def observe(self, key: CalibrationKey, estimated: int, reported: int) -> float:
        """Record one request: our ``estimated`` and the provider's ``reported`` prompt tokens.

        Returns the new factor. Raises ``ValueError`` when ``estimated`` or ``reported`` is not
        positive (skip the call when a provider reports no usage).
        """
        name = calibration_key(key)
        if estimated <= 0:
            raise ValueError(
                f"calibration {name!r}: estimated tokens must be positive, got {estimated}"
            )
        if reported <= 0:
            raise ValueError(
                f"calibration {name!r}: reported tokens must be positive, got {reported}; "
                "do not call observe() when the provider reports no usage"
            )
        ratio = reported / estimated
        bounded = min(max(ratio, 1.0), self.max_ratio)
        record = self._records.get(name)
        previous = record.factor if record is not None else 1.0
        recent = [*(record.recent if record is not None else []), bounded][-self.window :]
        evidence = _median(recent)
        moved = previous + self.smoothing * (evidence - previous)
        proposal = evidence if record is None else moved
        step = 1.0 + self.max_step
        factor = min(max(proposal, previous / step), previous * step)
        factor = min(max(factor, 1.0), self.max_ratio)
        self._records[name] = CalibrationRecord(
            factor=factor,
            observations=(record.observations if record is not None else 0) + 1,
            last_ratio=ratio,
            last_estimated=estimated,
            last_reported=reported,
            recent=recent,
        )
        return factor

    def factor(self, key: CalibrationKey) -> float:
        """The learned factor of ``key`` (1.0 before any observation), without the margin."""
        record = self._records.get(calibration_key(key))
        return record.factor if record is not None else 1.0

    def correct(self, key: CalibrationKey, estimate: int) -> int:
        """``ceil(estimate * factor * (1 + margin))``, tokens; never below ``estimate``.

        Raises ``ValueError`` for a negative estimate.
        """
        return self._scaled(estimate, self.factor(key))

    def _scaled(self, estimate: int, factor: float) -> int:
        if estimate < 0:
            raise ValueError(f"cannot correct a negative estimate ({estimate} tokens)")
        scaled = estimate * factor * (1.0 + self.margin)
        # round away float noise first: 40,000 x 1.22 is 48,800, not 48,801
        return max(estimate, math.ceil(round(scaled, 6)))

    def ceiling_factor(self, key: CalibrationKey) -> float:
        """The factor a hard limit is checked with (the request ceiling): the learned factor, or
        the median of the last :data:`CEILING_EVIDENCE` bounded ratios when that is higher (the
        factor alone before there are that many, and always with a ``window`` below that).
        The moving average lags a ratio that keeps rising (a session whose content shifts
        toward text the local counter undercounts more); the recent median follows it within
        a report or two, and one outlier among three still does not move it."""
        record = self._records.get(calibration_key(key))
        if record is None:
            return 1.0
        recent = record.recent[-CEILING_EVIDENCE:]
        if len(recent) < CEILING_EVIDENCE:  # fewer reports: one outlier would be the median
            return record.factor
        return max(record.factor, _median(recent))

    def correct_ceiling(self, key: CalibrationKey, estimate: int) -> int:
        """:meth:`correct` with :meth:`ceiling_factor`: ``ceil(estimate * ceiling_factor *
        (1 + margin))``, tokens, never below :meth:`correct`'s (the ceiling factor is never
        below the factor). Raises ``ValueError`` for a negative estimate."""
        return self._scaled(estimate, self.ceiling_factor(key))

    def record(self, key: CalibrationKey) -> CalibrationRecord | None:
        """What has been learned for ``key`` (``None`` when nothing yet)."""
        return self._records.get(calibration_key(key))

    @property
    def keys(self) -> tuple[str, ...]:
        """The calibrated keys, in first-observation order."""
        return tuple(self._records)

    def to_state(self) -> CalibrationState:
        """A serializable copy (nothing shared with this calibration)."""
        return CalibrationState(
            smoothing=self.smoothing,
            margin=self.margin,
            records={k: _copy(r) for k, r in self._records.items()},
            max_ratio=self.max_ratio,
            max_step=self.max_step,
            window=self.window,
        )

    @classmethod
    def from_state(
        cls, state: CalibrationState, *, source: str | None = None, reset_invalid: bool = False
    ) -> Calibration:
        """Rebuild from :meth:`to_state`, sanity-checking every record: its factor and recent
        ratios must be finite and in ``[1.0, max_ratio]``, its counts non-negative.

        An invalid record raises :class:`CalibrationStateError` (a ``ValueError``) naming
        ``source``, the key and the value; with ``reset_invalid`` it is dropped instead (the
        factor is learned again from the next reports) and a :class:`CalibrationResetWarning`
        says so. Settings out of range raise :class:`CalibrationStateError` either way.
        """
        where = f"{source}: " if source else ""
        try:
            calibration = cls(
                smoothing=state.smoothing,
                margin=state.margin,
                max_ratio=state.max_ratio,
                max_step=state.max_step,
                window=state.window,
            )
        except (TypeError, ValueError) as exc:
            raise CalibrationStateError(f"{where}saved calibration settings: {exc}") from exc
        for key, record in state.records.items():
            problem = _record_problem(record, calibration.max_ratio)
            if problem is None:
                calibration._records[key] = _copy(record)
                continue
            message = (
                f"{where}calibration record {key!r}: {problem}; factors stay in "
                f"[1.0, {calibration.max_ratio}], the saved state is corrupt"
            )
            if not reset_invalid:
                raise CalibrationStateError(message)
            warnings.warn(
                f"{message}; reset to 1.0, it is learned again from the next reports",
                CalibrationResetWarning,
                stacklevel=2,
            )
        return calibration

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict (``smoothing``, ``margin``, ``records``)."""
        result: dict[str, Any] = msgspec.to_builtins(self.to_state())
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        """Rebuild from :meth:`to_dict`; ``msgspec.ValidationError`` names a bad field."""
        return cls.from_state(msgspec.convert(dict(data), CalibrationState))
