"""Calibration of token estimates from provider-reported prompt tokens.

A local count (a heuristic, or tiktoken standing in for another vendor's tokenizer) drifts from
what the provider bills. After each request the runtime calls :meth:`Calibration.observe` with
the estimate it made and the ``prompt_tokens`` / ``input_tokens`` the provider reported; later
estimates for the same provider and model are scaled by the learned factor.

Rule (DESIGN.md §4 "Budget truth": counts are corrected from reported usage, only ever
tightened, on measured evidence; field case FC-18):

* the first observation sets the factor to ``reported / estimated`` (100,000 estimated and
  122,000 reported give 1.22);
* later observations move it as an exponential moving average, ``f += smoothing * (r - f)``;
* evidence of over-counting (``r < 1``) moves the factor down only toward 1.0, never below: an
  estimate is never deliberately lowered, so a corrected estimate is always at least the raw one;
* an optional ``margin`` (0.05 = 5%) is added on top;
* each provider and model keeps its own factor.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs
import msgspec

__all__ = [
    "Calibration",
    "CalibrationKey",
    "CalibrationRecord",
    "CalibrationState",
    "calibration_key",
]

CalibrationKey = str | tuple[str, str]


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

    ``factor`` (>= 1.0) scales estimates; ``observations`` counts reports; ``last_ratio`` is the
    latest ``reported / estimated``; ``last_estimated`` / ``last_reported`` are in tokens.
    """

    factor: float
    observations: int
    last_ratio: float
    last_estimated: int
    last_reported: int


class CalibrationState(msgspec.Struct):
    """The serializable form of a :class:`Calibration` (JSON / msgpack via msgspec)."""

    smoothing: float
    margin: float
    records: dict[str, CalibrationRecord] = msgspec.field(default_factory=dict)


def _check_smoothing(_instance: object, _attribute: object, value: float) -> None:
    if not 0.0 < value <= 1.0:
        raise ValueError(f"Calibration smoothing must be in (0, 1], got {value}")


def _check_margin(_instance: object, _attribute: object, value: float) -> None:
    if not 0.0 <= value < 1.0 or math.isnan(value):
        raise ValueError(f"Calibration margin must be in [0, 1) (0.05 = 5%), got {value}")


@attrs.define(eq=False)
class Calibration:
    """Per-(provider, model) correction factors learned from reported usage.

    ``smoothing`` is the weight of a new observation in the moving average (0 < s <= 1);
    ``margin`` is a safety margin added to every corrected estimate (0.05 = +5%).
    """

    smoothing: float = attrs.field(default=0.3, validator=_check_smoothing)
    margin: float = attrs.field(default=0.0, validator=_check_margin)
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
        target = max(1.0, ratio)
        record = self._records.get(name)
        if record is None:
            factor = target
            count = 1
        else:
            factor = record.factor + self.smoothing * (target - record.factor)
            count = record.observations + 1
        factor = max(1.0, factor)
        self._records[name] = CalibrationRecord(
            factor=factor,
            observations=count,
            last_ratio=ratio,
            last_estimated=estimated,
            last_reported=reported,
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
        if estimate < 0:
            raise ValueError(f"cannot correct a negative estimate ({estimate} tokens)")
        scaled = estimate * self.factor(key) * (1.0 + self.margin)
        # round away float noise first: 40,000 x 1.22 is 48,800, not 48,801
        return max(estimate, math.ceil(round(scaled, 6)))

    def record(self, key: CalibrationKey) -> CalibrationRecord | None:
        """What has been learned for ``key`` (``None`` when nothing yet)."""
        return self._records.get(calibration_key(key))

    @property
    def keys(self) -> tuple[str, ...]:
        """The calibrated keys, in first-observation order."""
        return tuple(self._records)

    def to_state(self) -> CalibrationState:
        """A serializable copy."""
        return CalibrationState(
            smoothing=self.smoothing,
            margin=self.margin,
            records={k: msgspec.structs.replace(r) for k, r in self._records.items()},
        )

    @classmethod
    def from_state(cls, state: CalibrationState) -> Calibration:
        """Rebuild from :meth:`to_state`. Raises ``ValueError`` for a factor below 1.0."""
        calibration = cls(smoothing=state.smoothing, margin=state.margin)
        for key, record in state.records.items():
            if not record.factor >= 1.0:
                raise ValueError(
                    f"calibration record {key!r}: factor {record.factor} is below 1.0; "
                    "factors never go below 1.0, the saved state is corrupt"
                )
            calibration._records[key] = msgspec.structs.replace(record)
        return calibration

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict (``smoothing``, ``margin``, ``records``)."""
        result: dict[str, Any] = msgspec.to_builtins(self.to_state())
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        """Rebuild from :meth:`to_dict`; ``msgspec.ValidationError`` names a bad field."""
        return cls.from_state(msgspec.convert(dict(data), CalibrationState))
