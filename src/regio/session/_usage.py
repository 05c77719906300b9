"""The usage ledger: provider-reported usage, normalized per call, with its cost.

:func:`normalize_usage` reads the usage of any registered provider's API -- objects from the SDKs
(attributes) or plain dicts -- into one :class:`UsageRecord`, with the provider's usage parser
(:class:`regio.providers.UsageParser`). The built-in ones:

* Anthropic Messages: ``input_tokens`` (the *uncached* part), ``cache_read_input_tokens``,
  ``cache_creation_input_tokens`` with the optional breakdown ``cache_creation.
  ephemeral_5m_input_tokens`` / ``ephemeral_1h_input_tokens``, ``output_tokens``. The prompt
  size is the sum of the three input fields (Anthropic docs, "Prompt caching: tracking cache
  performance");
* OpenAI Chat Completions: ``prompt_tokens`` (all of the prompt),
  ``prompt_tokens_details.cached_tokens``, ``completion_tokens``;
* OpenAI Responses: ``input_tokens`` (all of the prompt), ``input_tokens_details.
  cached_tokens``, ``output_tokens``.

A response object with a ``usage`` attribute / key is accepted too. Cost uses the prices of
the cache rules, looked up through a :data:`PriceLookup`
(:func:`rule_prices` by default, which reads :mod:`regio.cache.rules`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import msgspec

from regio.cache.billing import bill, input_units
from regio.errors import UsageError
from regio.providers.base import CacheRuleKey
from regio.providers.fields import field
from regio.providers.registry import find_provider, usage_parser_for, usage_parsers

if TYPE_CHECKING:
    from ._stored import StoredRecords

__all__ = [
    "ModelPricing",
    "PriceLookup",
    "UsageLedger",
    "UsageRecord",
    "UsageTotals",
    "normalize_usage",
    "rule_prices",
    "usage_cost",
]


class ModelPricing(msgspec.Struct, frozen=True):
    """Prices of one model: ``input`` / ``output`` in USD per million tokens (``None`` when
    unknown) and multipliers of the input price per token class (``read``, ``write_5m``,
    ``write_1h``, ``write``, ``plain``); ``rule_id`` names the cache rule they came from."""

    input: float | None
    output: float | None = None
    mult: dict[str, float] = msgspec.field(default_factory=dict)
    rule_id: str | None = None

    def m(self, kind: str, default: float = 1.0) -> float:
        """Multiplier of ``kind`` (``default`` when the rule does not list it)."""
        return float(self.mult.get(kind, default))


#: ``(provider, model) -> ModelPricing | None``.
PriceLookup = Callable[[str, str], "ModelPricing | None"]


def rule_prices(provider: str, model: str) -> ModelPricing | None:
    """Prices from the packaged cache rules, through the provider's cache rule
    (:meth:`regio.providers.CacheRuleKey.resolve`; a provider no registration knows is looked
    up under its own name); ``None`` when the provider has no cache rule, no rule matches or
    the rules are not available."""
    found = find_provider(provider)
    key = found.cache_rule if found is not None else CacheRuleKey(provider)
    if key is None:
        return None
    try:
        rule = key.resolve(model)
    except (ValueError, LookupError, OSError, ImportError):
        return None
    return ModelPricing(
        input=rule.price.input, output=rule.price.output, mult=dict(rule.mult), rule_id=rule.id
    )


class UsageRecord(msgspec.Struct, frozen=True):
    """One provider call's usage (tokens; USD).

    ``prompt_tokens`` = ``uncached + cache_read + cache_write_5m + cache_write_1h +
    cache_write``; ``estimated_tokens`` is the engine's own estimate of the request (``None``
    when unknown); ``cost_usd`` is ``None`` without an input price; ``api`` the usage shape
    recognised (the :attr:`regio.providers.UsageParser.api` that read it: ``anthropic`` |
    ``openai_chat`` | ``openai_responses`` for the built-in providers; ``none`` for no usage).
    """

    index: int
    provider: str
    model: str
    api: str
    prompt_tokens: int
    uncached_tokens: int
    cache_read_tokens: int
    cache_write_5m_tokens: int = 0
    cache_write_1h_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    estimated_tokens: int | None = None
    cost_usd: float | None = None
    rule_id: str | None = None

    @property
    def cache_creation_tokens(self) -> int:
        """All tokens written to the cache."""
        return self.cache_write_5m_tokens + self.cache_write_1h_tokens + self.cache_write_tokens

    @property
    def hit_rate(self) -> float:
        """``cache_read / prompt_tokens`` (0.0 for an empty prompt)."""
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


class UsageTotals(msgspec.Struct, frozen=True):
    """Sums over a ledger (tokens; USD, ``None`` if some call had no price)."""

    calls: int
    prompt_tokens: int
    cache_read_tokens: int
    cache_creation_tokens: int
    uncached_tokens: int
    output_tokens: int
    cost_usd: float | None


#: the totals of no call, every count 0 and ``cost_usd`` 0.0 (where
#: :meth:`UsageLedger.totals` starts its running sums)
_NO_CALLS = UsageTotals(0, 0, 0, 0, 0, 0, 0.0)


def _plus(t: UsageTotals, r: UsageRecord) -> UsageTotals:
    """``t`` with the record ``r`` added (``cost_usd`` ``None`` once one record had none)."""
    return UsageTotals(
        calls=t.calls + 1,
        prompt_tokens=t.prompt_tokens + r.prompt_tokens,
        cache_read_tokens=t.cache_read_tokens + r.cache_read_tokens,
        cache_creation_tokens=t.cache_creation_tokens + r.cache_creation_tokens,
        uncached_tokens=t.uncached_tokens + r.uncached_tokens,
        output_tokens=t.output_tokens + r.output_tokens,
        cost_usd=None if t.cost_usd is None or r.cost_usd is None else t.cost_usd + r.cost_usd,
    )


def normalize_usage(usage: object) -> dict[str, Any]:
    """The token fields of ``usage`` (module doc) as a dict: ``api``, ``prompt_tokens``,
    ``uncached_tokens``, ``cache_read_tokens``, ``cache_write_5m_tokens``,
    ``cache_write_1h_tokens``, ``cache_write_tokens``, ``output_tokens``. The registered
    provider whose usage parser recognizes the shape reads it
    (:func:`regio.providers.usage_parser_for`); ``api`` is that parser's.

    ``None`` gives ``api="none"`` and zeros. Raises :class:`regio.errors.UsageError`
    (a ``RegioError`` and a ``ValueError``) naming the field for a
    negative or non-numeric count, or when the shape is not recognised.
    """
    zero = {
        "api": "none",
        "prompt_tokens": 0,
        "uncached_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_5m_tokens": 0,
        "cache_write_1h_tokens": 0,
        "cache_write_tokens": 0,
        "output_tokens": 0,
    }
    for _ in range(4):  # a response carries its usage in .usage (never deeper in any API)
        if usage is None or field(usage, "usage") is None or usage_parser_for(usage):
            break
        usage = field(usage, "usage")
    if usage is None:
        return zero
    parser = usage_parser_for(usage)
    if parser is None:
        if isinstance(usage, Mapping) and not usage:
            return zero
        shape = (
            f"a mapping with keys {sorted(map(str, usage))[:8]}"
            if isinstance(usage, Mapping)
            else f"a {type(usage).__name__}"
        )
        known = " or ".join(p.describes for p in usage_parsers())
        raise UsageError(f"unrecognised usage ({shape}): expected {known} fields")
    out = dict(zero)
    out.update(parser.parse(usage))
    out["api"] = parser.api
    return out


#: the prompt's token classes (they sum to ``prompt_tokens``)
PROMPT_FIELDS = (
    "uncached_tokens",
    "cache_read_tokens",
    "cache_write_5m_tokens",
    "cache_write_1h_tokens",
    "cache_write_tokens",
)


def usage_cost(fields: Mapping[str, int], pricing: ModelPricing | None) -> float | None:
    """USD of one call's token ``fields`` (:func:`normalize_usage`'s counts) at ``pricing``, through
    :func:`regio.cache.billing.bill`: ``None`` without a pricing or when a price its tokens
    need is not recorded (an output price ``None`` with output tokens is unpriced, not free)."""
    if pricing is None:
        return None
    units = input_units(
        pricing.mult,
        uncached=fields["uncached_tokens"],
        read=fields["cache_read_tokens"],
        write_5m=fields["cache_write_5m_tokens"],
        write_1h=fields["cache_write_1h_tokens"],
        write=fields["cache_write_tokens"],
    )
    prompt = sum(fields[k] for k in PROMPT_FIELDS)
    return bill(
        pricing.input,
        pricing.output,
        input_tokens=prompt,
        input_units=units,
        output_tokens=fields["output_tokens"],
    )


@attrs.define(eq=False)
class UsageLedger:
    """Every observed call, in order, with its cost.

    ``prices`` looks up prices per ``(provider, model)`` (default :func:`rule_prices`; results
    are memoized per key). A ledger loaded from a session store may hold its stored records
    as ``stored`` (a :class:`regio.session._stored.StoredRecords` with the newest as
    ``last``, the transcript's mechanism): they are read on first use of :attr:`records`;
    observing, :attr:`count`, :attr:`last` and :meth:`since` past them never read them, nor
    does :meth:`totals` when the store saved their totals with the session
    (``StoredRecords.summary``, a :class:`UsageTotals` of all of them).

    The records are append-only (:meth:`observe`, or appending to :attr:`records`; setting
    :attr:`records` starts the ledger over): :meth:`totals` keeps running sums and adds only
    the records appended since its last call.
    """

    prices: PriceLookup = rule_prices
    _records: list[UsageRecord] = attrs.field(factory=list, alias="records")
    _price_cache: dict[tuple[str, str], ModelPricing | None] = attrs.field(factory=dict, repr=False)
    _pending: StoredRecords[UsageRecord] | None = attrs.field(
        default=None, kw_only=True, alias="stored"
    )
    #: totals of the first ``calls`` records, in record order (``None``: not known without
    #: reading the stored)
    _sums: UsageTotals | None = attrs.field(default=None, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        pending = self._pending
        summary = pending.summary if pending is not None else None
        if pending is None:
            self._sums = _NO_CALLS
        elif isinstance(summary, UsageTotals) and summary.calls == pending.count:
            self._sums = summary

    @property
    def _pending_count(self) -> int:
        return self._pending.count if self._pending is not None else 0

    @property
    def records(self) -> list[UsageRecord]:
        """Every record, in order (reads the stored ones on first use)."""
        if self._pending is not None:
            self._records[:0] = self._pending.all("usage ledger")
            self._pending = None
        return self._records

    @records.setter
    def records(self, records: list[UsageRecord]) -> None:
        self._records = records
        self._pending = None
        self._sums = _NO_CALLS

    def forget_stored(self) -> int:
        """Give up the records stored before the load, unread (their store lost them:
        :mod:`regio.persistence._lostparts`); the records observed since stay. Returns how many
        were given up."""
        lost = self._pending_count
        self._pending, self._sums = None, None
        return lost

    @property
    def count(self) -> int:
        """How many calls were observed (pending records included, never read)."""
        return self._pending_count + len(self._records)

    def since(self, start: int) -> list[UsageRecord]:
        """The records from position ``start`` on (pending ones are read only when ``start``
        reaches into them)."""
        if start >= self._pending_count:
            return self._records[start - self._pending_count :]
        return self.records[start:]

    def pricing(self, provider: str, model: str) -> ModelPricing | None:
        """Prices of ``(provider, model)`` (memoized)."""
        key = (provider, model)
        if key not in self._price_cache:
            self._price_cache[key] = self.prices(provider, model) if provider and model else None
        return self._price_cache[key]

    def observe(
        self, usage: object, *, provider: str = "", model: str = "", estimated: int | None = None
    ) -> UsageRecord:
        """Append and return the :class:`UsageRecord` of one call (see :func:`normalize_usage`
        for accepted shapes and errors)."""
        fields = normalize_usage(usage)
        pricing = self.pricing(provider, model)
        record = UsageRecord(
            index=self.count,
            provider=provider,
            model=model,
            estimated_tokens=estimated,
            cost_usd=usage_cost(fields, pricing),
            rule_id=pricing.rule_id if pricing is not None else None,
            **fields,
        )
        self._records.append(record)
        return record

    @property
    def last(self) -> UsageRecord | None:
        """The newest record (``None``: none observed)."""
        if self._records:
            return self._records[-1]
        return self._pending.last if self._pending is not None else None

    def totals(self) -> UsageTotals:
        """Sums over every record (``cost_usd`` is ``None`` once some record has no cost; the
        costs are summed in record order). O(records appended since the last call): running
        sums, started from the stored records' totals saved with the session; without them (a
        session saved before regio of 2026-12-01 stored them) the first call reads the stored
        records and sums them in one pass."""
        sums = self._sums
        if sums is None or sums.calls > self.count:  # unknown, or the records were replaced
            sums = self._sums = _NO_CALLS
        pending = self._pending_count
        if sums.calls < pending:  # started from nothing: read the stored records
            self.records  # noqa: B018
            pending = 0
        for r in self._records[sums.calls - pending :]:
            sums = _plus(sums, r)
        self._sums = sums
        return sums

    def saved_totals(self) -> UsageTotals | None:
        """:meth:`totals` when known without reading the stored records (what a store save
        keeps with the session), else ``None``."""
        if self._sums is None and self._pending_count:
            return None
        return self.totals()
