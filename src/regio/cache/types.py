"""Input and output types of the cache models (data that travels: frozen msgspec Structs).

Input
-----
:class:`CacheRequest` is one provider call as a cache sees it: ordered :class:`CacheBlock` s
(never re-sorted) with token counts, a digest of the bytes sent, an optional breakpoint
``mark`` (``"5m"`` | ``"1h"``, Anthropic ``cache_control``; any mark is an explicit
``prompt_cache_breakpoint`` for GPT-5.6) and optional token ids (used by the engine models
and for per-token longest-common-prefix; without them a prefix is matched in whole blocks,
a lower bound). Times are simulated seconds; ``t_start`` is when the
request was sent, ``ttft`` the seconds until its first output token (a fresh entry becomes
readable at ``t_start + ttft``).

Output
------
Every model returns one :class:`CacheOutcome` per request (read, write_5m, write_1h, write,
uncached tokens; ``read + write_5m + write_1h + write + uncached == prompt_tokens``; input
units ``sum(mult_c * count_c)`` and cost in USD) and :class:`CacheReport` aggregates them
(totals, ``hit_rate`` H, effective input cost ``eps``).

Errors
------
:class:`CacheError` (a ``ValueError``) is the base: :class:`CacheRuleError` for a bad rules
file, :class:`BreakpointError` for a request the provider refuses with HTTP 400 (Anthropic
marks), :class:`CacheExpiredError` for a request naming a missing or expired explicit cache
(Gemini ``cachedContents``), :class:`CacheRequestError` for malformed input.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

from regio.cache.billing import total

__all__ = [
    "BlockKind",
    "BreakpointError",
    "CacheBlock",
    "CacheError",
    "CacheExpiredError",
    "CacheOutcome",
    "CacheReport",
    "CacheRequest",
    "CacheRequestError",
    "CacheRuleError",
    "Level",
    "Mark",
]

BlockKind = Literal["text", "tool_use", "tool_result", "thinking", "provider", "image"]
Level = Literal["tools", "system", "messages"]
Mark = Literal["5m", "1h"]


class CacheError(ValueError):
    """Base of every error raised by :mod:`regio.cache`."""


class CacheRuleError(CacheError):
    """A cache rules file is malformed; the message names the rule id and the key."""


class CacheRequestError(CacheError):
    """A :class:`CacheRequest` is malformed; the message names the request id and field."""


class BreakpointError(CacheError):
    """The provider would refuse the request with HTTP 400 (more than 4
    ``cache_control`` marks, a 1h mark after a 5m mark, a mark on a thinking or empty block,
    automatic mode with another TTL already on the last cacheable block; Anthropic
    prompt-caching docs: https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching)."""


class CacheExpiredError(CacheError):
    """A request names an explicit cache (Gemini ``cachedContents``) that does not exist or
    whose TTL has run out."""


class CacheBlock(msgspec.Struct, frozen=True):
    """One content block as the cache sees it.

    * ``kind``: ``text`` | ``tool_use`` | ``tool_result`` | ``thinking`` | ``provider`` (a
      provider's block kept as received, :class:`regio.content.ProviderBlock`) | ``image``.
    * ``level``: ``tools`` | ``system`` | ``messages`` (Anthropic order of the prefix).
    * ``tokens``: token count (>= 0).
    * ``digest``: digest of the bytes sent for this block (any string; equal digests mean
      equal bytes).
    * ``mark``: ``None`` or a breakpoint TTL ``"5m"`` / ``"1h"``.
    * ``token_ids``: optional token ids (``len == tokens``) for per-token prefix matching.
    * ``role``: optional message role (``system``/``developer``/``user``/``assistant``/``tool``)
      and ``message``: optional message index; the GPT-5.6 model uses them to find message ends.
    """

    tokens: int
    digest: str
    kind: BlockKind = "text"
    level: Level = "messages"
    mark: Mark | None = None
    token_ids: tuple[int, ...] | None = None
    role: str | None = None
    message: int | None = None


class CacheRequest(msgspec.Struct, frozen=True):
    """One request in a trace.

    * ``id``: unique id (ties at equal ``t_start`` are processed by id; seeds RNG choices).
    * ``blocks``: the prompt in order.
    * ``scope``: cache scope (workspace / organization / project / user / slot); nothing crosses it.
    * ``key``: ``prompt_cache_key`` (OpenAI routing; GPT-5.6 scope).
    * ``model``: model name, e.g. ``claude-sonnet-4-6``.
    * ``t_start``, ``ttft`` (default 1.0), ``t_end``: simulated seconds.
    * ``output_tokens``: sampled tokens; ``output_token_ids`` optional ids (engines keep them);
      ``output_digest``: digest the answer will carry when re-sent as a block (lets
      output-persisting caches match it without token ids).
    * ``auto_mark``: Anthropic automatic mode (top-level ``cache_control``) TTL or ``None``.
    * ``params``: request parameters salted into the prefix hash at their ``render_level``
      (e.g. ``{"tool_choice": "auto"}``).
    * ``cache_mode``: GPT-5.6 ``prompt_cache_options.mode`` (``implicit`` | ``explicit``).
    * ``cached_content``: Gemini explicit cache name used by this request.
    """

    id: str
    blocks: tuple[CacheBlock, ...]
    scope: str = "default"
    key: str | None = None
    model: str = ""
    t_start: float = 0.0
    ttft: float = 1.0
    t_end: float | None = None
    output_tokens: int = 0
    output_token_ids: tuple[int, ...] | None = None
    output_digest: str | None = None
    auto_mark: Mark | None = None
    params: dict[str, str] = msgspec.field(default_factory=dict)
    cache_mode: Literal["implicit", "explicit"] = "implicit"
    cached_content: str | None = None

    @property
    def prompt_tokens(self) -> int:
        """n: total prompt tokens (sum of block tokens)."""
        return sum(b.tokens for b in self.blocks)


class CacheOutcome(msgspec.Struct, frozen=True):
    """What one request read, wrote and paid (tokens; USD).

    ``read + write_5m + write_1h + write + uncached == prompt_tokens``. ``write`` is the
    generic write of GPT-5.6; Anthropic uses ``write_5m`` / ``write_1h``. ``input_units`` is
    ``sum(mult_c * count_c)`` in base-input-token units; ``cost_usd`` is
    ``price.input/1e6 * input_units + price.output/1e6 * output_tokens``, ``None`` (unpriced)
    when a price its tokens need is not recorded (:func:`regio.cache.billing.bill`).
    """

    id: str
    rule_id: str
    prompt_tokens: int
    read: int
    uncached: int
    write_5m: int = 0
    write_1h: int = 0
    write: int = 0
    output_tokens: int = 0
    input_units: float = 0.0
    cost_usd: float | None = None

    @property
    def creation(self) -> int:
        """All written tokens (Anthropic ``cache_creation_input_tokens``)."""
        return self.write_5m + self.write_1h + self.write


class CacheReport(msgspec.Struct, frozen=True):
    """Totals over a sequence of outcomes.

    ``hit_rate`` H = read / prompt tokens; ``eps`` = input units / prompt tokens (1 = no
    saving, > 1 possible when writes are never read); ``cost_usd`` is ``None`` if any outcome
    had no price.
    """

    rule_id: str
    requests: int
    prompt_tokens: int
    read: int
    write_5m: int
    write_1h: int
    write: int
    uncached: int
    output_tokens: int
    input_units: float
    cost_usd: float | None
    hit_rate: float
    eps: float
    outcomes: tuple[CacheOutcome, ...] = ()

    @property
    def creation(self) -> int:
        """All written tokens."""
        return self.write_5m + self.write_1h + self.write

    def efficiency(self, bound: CacheReport) -> float:
        """H / H_max against an oracle report (0 when the bound is 0)."""
        return self.hit_rate / bound.hit_rate if bound.hit_rate > 0 else 0.0

    @classmethod
    def from_outcomes(cls, rule_id: str, outcomes: Iterable[CacheOutcome]) -> CacheReport:
        """Aggregate outcomes into a report."""
        outs = tuple(outcomes)
        n = sum(o.prompt_tokens for o in outs)
        read = sum(o.read for o in outs)
        units = sum(o.input_units for o in outs)
        cost = total(o.cost_usd for o in outs)
        return cls(
            rule_id=rule_id,
            requests=len(outs),
            prompt_tokens=n,
            read=read,
            write_5m=sum(o.write_5m for o in outs),
            write_1h=sum(o.write_1h for o in outs),
            write=sum(o.write for o in outs),
            uncached=sum(o.uncached for o in outs),
            output_tokens=sum(o.output_tokens for o in outs),
            input_units=units,
            cost_usd=cost,
            hit_rate=read / n if n else 0.0,
            eps=units / n if n else 1.0,
            outcomes=outs,
        )
