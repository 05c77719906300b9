"""Data that travels out of the layout: tool specs, layout blocks, breakpoints, the request and
the layout state carried between requests (frozen msgspec Structs).

Shapes (token counts are ints, in tokens):

* :class:`ToolSpec` — one tool definition (``name``, ``description``, JSON Schema
  ``input_schema``). Tools keep the order they are given; their JSON is serialized with sorted
  keys, so a dict built in another insertion order gives the same bytes.
* :class:`LayoutBlock` — one content block of the prompt, in provider order
  ``tools -> system -> messages -> tail``. Exactly one of ``tool`` (level ``tools``) or
  ``block`` (every other level) is set. ``message`` is the index of the (repaired) conversation
  message the block belongs to; tail blocks belong to the last user turn.
* :class:`Breakpoint` — a planned cache marker: the index of the block it sits on, its TTL
  (``"5m"`` | ``"1h"``) and the slot that asked for it (``stable``, ``settled``, ``newest``,
  ``spare``, ``system``, ``message``).
* :class:`Request` — the provider-neutral result of :func:`regio.layout.assemble`.
* :class:`LayoutState` — what the ``regio`` strategy remembers between requests (chunk
  boundaries, settled entry ids, notes and their anchors, stable-region digests, breakpoint
  read statistics, what each region's writes did: :class:`RegionWatch`). It is passed in and
  returned, so ``assemble`` stays pure.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Literal

import msgspec

from regio.content import Block, ProviderBlock, Text, Thinking, canonical_json, content_hash

from .events import LayoutEvent

__all__ = [
    "DEFAULT_MIN_CACHE_TOKENS",
    "LEVELS",
    "MARKED_HISTORY",
    "TTLS",
    "Breakpoint",
    "BreakpointStat",
    "CacheEconomics",
    "ChunkState",
    "HeldMark",
    "LayoutBlock",
    "LayoutState",
    "Level",
    "Note",
    "Origin",
    "RegionChange",
    "RegionWatch",
    "Request",
    "TailCopy",
    "ToolSpec",
    "Ttl",
    "block_digest",
    "chain_hash",
]

_TOKENS = attrgetter("tokens")

#: The shortest prefix the layout assumes a provider caches when the caller names none, tokens:
#: the ``min_tokens`` of the default provider's default model in the cache rules data
#: (``regio/data/cache-rules.yaml``, rule ``anthropic/sonnet-4-6@2026-H2``: Anthropic's
#: documented 1,024 for Sonnet-class models,
#: https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching). The one declaration of
#: this default; a test checks it against the rules data. A named provider's own minimum
#: comes from its rule (:func:`regio.providers.economics_for`).
DEFAULT_MIN_CACHE_TOKENS = 1024

Level = Literal["tools", "system", "messages", "tail"]
#: Where a block comes from: a tool definition, a region section (system or tail), a
#: freezing-tail copy, a conversation entry, an unsettled note, a frozen tail copy in the
#: conversation, a call's results (``pending``: one of them is still pending), a
#: ``compact_history`` summary opening the messages (``summary``), or a message the layout
#: inserted (``synthetic``).
Origin = Literal[
    "progress",
    "tool",
    "region",
    "tail",
    "entry",
    "note",
    "frozen",
    "results",
    "pending",
    "summary",
    "synthetic",
]
Ttl = Literal["5m", "1h"]
LEVELS: tuple[str, ...] = ("tools", "system", "messages", "tail")
TTLS: tuple[str, ...] = ("5m", "1h")

#: Requests whose marked prefixes a :class:`LayoutState` remembers whatever the time
#: (the last ``MARKED_HISTORY`` entries of ``held``). A 5-minute cache entry outlives them in
#: a tool loop whose calls are seconds apart, and a marker on an expired prefix costs no more
#: than the write it would pay anyway. Older ones are remembered, thinned, only while the
#: request times say the provider still holds them (:mod:`regio.layout.breakpoints`).
MARKED_HISTORY = 16

#: Root of the prefix-hash chain (h_0); the chain is h_k = sha256(h_{k-1} + digest_k).
CHAIN_ROOT = content_hash("regio.layout.prefix.v1")


class ToolSpec(msgspec.Struct, frozen=True):
    """A tool definition: ``name``, ``description`` and ``input_schema`` (a JSON Schema object).

    Raises ``ValueError`` from :meth:`validate` when the name is empty or the schema is not an
    object schema (``{"type": "object", ...}``).
    """

    name: str
    description: str = ""
    input_schema: dict[str, Any] = msgspec.field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )

    def validate(self) -> None:
        """Raise ``ValueError`` naming the tool when the definition is unusable."""
        if not self.name:
            raise ValueError("ToolSpec.name is empty; give every tool a unique name")
        if self.input_schema.get("type") != "object":
            raise ValueError(
                f"tool {self.name!r}: input_schema must be a JSON Schema object "
                '(set "type": "object")'
            )

    def canonical_schema(self) -> dict[str, Any]:
        """``input_schema`` with keys in sorted order at every depth (stable JSON key order)."""
        out: dict[str, Any] = msgspec.json.decode(canonical_json(self.input_schema))
        return out


class LayoutBlock(msgspec.Struct, frozen=True):
    """One block of a request (see module docstring).

    * ``level``: ``tools`` | ``system`` | ``messages`` | ``tail``;
    * ``role``: ``system`` for tools and system blocks, the message role (``user``,
      ``assistant``, ``tool``) for messages, ``user`` for the tail;
    * ``block`` / ``tool``: the content;
    * ``tokens``: token count of the content;
    * ``region``: the region it came from (``None`` for tools and repair insertions);
    * ``message``: message index (messages and tail levels), else ``None``;
    * ``source``: entry id, ``note:<entry id>``, ``chunk:<region>:<n>``, ``synthetic:<reason>``
      or ``tool:<name>``;
    * ``digest``: sha256 of the canonical JSON of level, role and content;
    * ``prefix_hash``: chained sha256 through this block (equal hash, equal prefix);
    * ``breakpoint``: the TTL of a planned cache marker on this block, else ``None``;
    * ``separate``: the renderer must not merge this block's message into the previous one
      (used by :func:`regio.layout.fork_for_summary`);
    * ``origin``: where the block comes from (:data:`Origin`); ``volatility``: the region's
      volatility for region sections (``stable``, ``grows``, ``rewritten``; ``mixed`` for a
      section joining several); ``chunk``: the chunk number of a grows-region chunk.
    """

    level: Level
    role: str
    tokens: int
    digest: str
    prefix_hash: str = ""
    block: Block | None = None
    tool: ToolSpec | None = None
    region: str | None = None
    message: int | None = None
    source: str = ""
    breakpoint: Ttl | None = None
    separate: bool = False
    origin: Origin = "entry"
    volatility: str | None = None
    chunk: int | None = None

    @property
    def cacheable(self) -> bool:
        """Whether a ``cache_control`` marker may sit here (no thinking, provider, empty block)."""
        if isinstance(self.block, Thinking | ProviderBlock):
            return False
        return not (isinstance(self.block, Text) and not self.block.text)


def block_digest(level: str, role: str, block: Block | None, tool: ToolSpec | None) -> str:
    """sha256 of the canonical JSON of ``[level, role, content]`` (the marker is not hashed)."""
    if tool is not None:
        payload: Any = [
            "tool",
            tool.name,
            tool.description,
            tool.canonical_schema(),
        ]
    else:
        payload = block
    # tail blocks hash like message blocks of the same role: where a block sits is carried by
    # the chain, not by its own digest.
    lvl = "messages" if level == "tail" else level
    return content_hash([lvl, role, payload])


def chain_hash(previous: str, digest: str) -> str:
    """h_k = sha256(h_{k-1} + digest_k) as hex."""
    return content_hash([previous, digest])


class CacheEconomics(msgspec.Struct, frozen=True):
    """What the layout needs to know of a provider's cache pricing, passed in by the caller
    (the provider's cache rule, :func:`regio.providers.economics_for`).

    * ``min_cache_tokens``: the shortest prefix the provider caches (tokens; default
      :data:`DEFAULT_MIN_CACHE_TOKENS`);
    * ``gc_ratio``: ``(m_write - m_read) / m_read`` of its price multipliers, how many
      stale-token-requests of rent equal one token of rewrite (the freezing tail's ski-rental
      rule, :mod:`regio.layout.tail`; default Anthropic's (1.25 - 0.1) / 0.1 = 11.5);
    * ``mark_odds``: ``(m_write - m_plain) / (m_write - m_read)`` for a 5-minute marker, the
      least chance that the tail's copies are still current on the next request for a cache
      marker on them to pay (:func:`regio.layout.tail.settling_copies`; default Anthropic's
      0.25 / 1.15 = 0.217; 0 for a cache without a write fee); ``mark_odds_1h`` the same for a
      1-hour marker (default Anthropic's 1.0 / 1.9 = 0.526).
    """

    min_cache_tokens: int = DEFAULT_MIN_CACHE_TOKENS
    gc_ratio: float = 11.5
    mark_odds: float = 0.25 / 1.15
    mark_odds_1h: float = 1.0 / 1.9

    def odds_for(self, ttl: str) -> float:
        """The marker odds for a ``ttl`` (``"5m"`` | ``"1h"``) marker."""
        return self.mark_odds_1h if ttl == "1h" else self.mark_odds


class Breakpoint(msgspec.Struct, frozen=True):
    """A planned cache marker: ``index`` into ``Request.blocks``, ``ttl``, ``slot`` (why)."""

    index: int
    ttl: Ttl
    slot: str


class ChunkState(msgspec.Struct, frozen=True):
    """Frozen chunk boundaries of one grows region: entry ids per chunk and their digests."""

    entry_ids: tuple[str, ...]
    digests: tuple[str, ...]
    tokens: int


class Note(msgspec.Struct, frozen=True):
    """An unsettled grows-region entry travelling in the conversation.

    ``entry_id`` / ``region``; ``anchor``: the conversation entry id it is placed after
    (``None``: before the first message); ``digest``: the entry digest when first placed.
    """

    entry_id: str
    region: str
    anchor: str | None
    digest: str
    placed: int = 0


class TailCopy(msgspec.Struct, frozen=True):
    """One copy of a rewritten region's value in the freezing tail (``regio``; docs/layout.md).

    * ``region``: the region name; ``digest``: sha256 of the region's rendered text (``""``
      rendered as the empty-region notice);
    * ``text``: the exact block text (constant-format header + the region's rendered text);
    * ``tokens``: token count of ``text``;
    * ``turn``: the conversation turn the value was set in (shown in the header);
    * ``anchor``: the conversation entry id the copy follows (``None``: before the first
      message) — the newest conversation entry of the request that emitted it;
    * ``placed``: the request number (``LayoutState.requests`` + 1) that emitted it; copies
      and notes with one anchor are placed in ``placed`` order;
    * ``entries``: (entry id, entry digest) of the region entries the copy shows (empty when
      the region's rendering cannot be split into entries);
    * ``delta``: the copy shows only entries appended since the region's earlier copies (it
      adds to them; a full copy supersedes them);
    * ``follows``: the prefix hash the ``newest`` marker of the emitting request sat on (the
      conversation just before the copy; ``""``: that request had none). A collection that
      drops the copy rewrites the prompt from the copy on; the provider still holds that
      prefix, however many requests ago it was marked, so the ``spare`` marker reads it back
      (:mod:`regio.layout.breakpoints`).
    """

    region: str
    digest: str
    text: str
    tokens: int
    turn: int
    anchor: str | None
    placed: int
    entries: tuple[tuple[str, str], ...] = ()
    delta: bool = False
    follows: str = ""


class HeldMark(msgspec.Struct, frozen=True, array_like=True):
    """A prefix a ``newest`` marker sat on (``LayoutState.held``, :mod:`regio.layout.breakpoints`),
    saved as ``[request, until, prefix_hash, read]``.

    * ``request``: the request number (``LayoutState.requests``) that marked it (``0``:
      unknown, carried over from a state saved before ``held`` existed);
    * ``until``: the time (seconds, the caller's clock: ``assemble(sent_at=...)``) until which
      the provider holds it at least: the start of the last request that marked it plus that
      marker's TTL (``None``: no time was given);
    * ``prefix_hash``: the first 16 hex digits of the chained prefix hash of the marked
      block (:data:`regio.layout.breakpoints.HELD_DIGITS`);
    * ``read``: a later request's marker sat on it again (a ``spare`` read it back), so
      thinning keeps it while it lives.
    """

    request: int
    until: float | None
    prefix_hash: str
    read: bool = False


class BreakpointStat(msgspec.Struct, frozen=True):
    """Per slot: requests seen with a mark, how many marks' prefixes survived into the next
    request, and whether the "never read" warning was already given."""

    marks: int = 0
    survived: int = 0
    warned: bool = False


class RegionChange(msgspec.Struct, frozen=True):
    """What one region's writes did between two requests (:mod:`regio.layout.observe`).

    * ``request``: the request number (``LayoutState.requests``) that saw the change;
    * ``appended`` / ``rewritten`` / ``removed``: entries added after the last entry kept,
      entries changed in place (other bytes, a replacement at the same place, an insertion
      or a move before a kept entry) and entries gone;
    * ``at``: the token offset, in the previous request, of the first byte the change
      invalidated (the region's first block there), ``-1`` when it invalidated nothing sent
      before (an append travelling as a note, a region not sent);
    * ``after``: tokens of the previous request from ``at`` on: what the provider had to
      write to its cache again because of the change (``0`` when ``at`` is ``-1``);
    * ``free``: the request rewrote the opening of the conversation anyway (its first message
      or the summaries that open it changed: a compaction), so the change cost little more
      where the region was; it does not count toward moving the region.
    """

    request: int
    appended: int = 0
    rewritten: int = 0
    removed: int = 0
    at: int = -1
    after: int = 0
    free: bool = False

    @property
    def churn(self) -> bool:
        """The change removed or rewrote entries (more than appending)."""
        return bool(self.rewritten or self.removed)

    @property
    def counts(self) -> bool:
        """A churn that counts toward moving the region: one that was not :attr:`free`."""
        return self.churn and not self.free


class RegionWatch(msgspec.Struct, frozen=True):
    """What the ``regio`` layout knows of one region declared ``stable`` or ``grows`` at the
    end of a request (:mod:`regio.layout.observe`).

    * ``version``: the region's version then (an unchanged version: nothing to compare);
    * ``entries``: (identity, digest) of its entries then, in order (the identity is the
      entry's key in a keyed region, else its id; 16 hex digits of the digest);
    * ``changes``: its last changes between requests, oldest first (at most
      :data:`regio.layout.observe.OBSERVED_CHANGES`);
    * ``placed``: the volatility it was laid out with (``stable``, ``grows``, ``rewritten``);
    * ``reason``: why it was laid out other than declared (``writer``, ``removes``,
      ``changes``), ``""`` when as declared;
    * ``offset``: token offset of its first block in that request (``-1``: not sent, or only
      as notes in the conversation).
    """

    version: int
    entries: tuple[tuple[str, str], ...] = ()
    changes: tuple[RegionChange, ...] = ()
    placed: str = ""
    reason: str = ""
    offset: int = -1


class LayoutState(msgspec.Struct, frozen=True):
    """State carried between requests (serializable with ``msgspec.json``).

    * ``strategy``: the strategy that produced it (a state is only reused by the same one);
    * ``requests``: how many requests were assembled with this state chain;
    * ``chunks``: region -> frozen chunks (settled entries only);
    * ``settled``: region -> settled entry ids, in settle order;
    * ``notes``: unsettled entries placed in the conversation;
    * ``first_message``: digest of the first conversation entry last time (a change means the
      prefix was rewritten: compaction or eviction);
    * ``stable_digests``: stable region -> (version, digest of its rendered bytes);
    * ``stable_warned``: stable regions already reported as changed;
    * ``system_hash``: prefix hash at the end of the system level last time;
    * ``marks``: (slot, prefix hash) of last request's breakpoints; ``stats`` per slot;
    * ``tail``: the rewritten-region copies emitted in the tail of the last request;
    * ``frozen``: copies frozen into the conversation (current and stale), in placement order;
    * ``stale_rent``: stale tokens summed over requests since the last collection (:mod:`.tail`);
    * ``watch``: region -> :class:`RegionWatch` (regions declared ``stable`` or ``grows``):
      what their writes did over the last requests and where they were laid out
      (observed volatility, :mod:`regio.layout.observe`);
    * ``tokens``: the request's total tokens (the figures of the next request's changes);
    * ``marked``: read only, from states saved before ``held`` (a new state keeps them there):
      the prefix hashes the last :data:`MARKED_HISTORY` ``newest`` markers sat on, oldest first;
    * ``tail_held``: region -> (its tail copies whose next request came, of them the copies
      whose value was still current then), each earlier count discounted
      (:func:`regio.layout.tail.tally_held`), the evidence of
      :func:`regio.layout.tail.settling_copies`;
    * ``held``: the prefixes ``newest`` markers sat on, oldest first (:class:`HeldMark`):
      those of the last :data:`MARKED_HISTORY` marking requests, then older ones thinned
      (sparser further back, at most :data:`regio.layout.breakpoints.HELD_CAP` in all) while the
      request times say the provider still holds them: a request whose conversation was
      rewritten after one of them reads it back (the ``spare`` marker, :mod:`~.breakpoints`);
    * ``rewrite_odds``, ``rewrite_horizon``: the ``assemble`` arguments it was laid out with;
      ``newest_entry``: its newest conversation entry's id (``""``: none; ``None``: unknown);
    * ``opening``: a digest of what opens the conversation (its first entry and the
      ``compact_history`` regions' versions): a change means the conversation was rewritten
      from its start (:mod:`regio.layout.observe`);
    * ``anchored``: digest of the conversation entries up to and including the anchor of
      the first tail copy (``""``: no copies): when the next request's entries up to that
      anchor differ (an entry changed in place or removed: old tool results cleared), the
      prompt is rewritten before every copy anyway and the freezing tail is collected
      (:mod:`regio.layout.tail`).
    """

    strategy: str = ""
    requests: int = 0
    chunks: dict[str, tuple[ChunkState, ...]] = msgspec.field(default_factory=dict)
    settled: dict[str, tuple[str, ...]] = msgspec.field(default_factory=dict)
    notes: tuple[Note, ...] = ()
    first_message: str | None = None
    stable_digests: dict[str, tuple[int, str]] = msgspec.field(default_factory=dict)
    stable_warned: tuple[str, ...] = ()
    system_hash: str | None = None
    marks: tuple[tuple[str, str], ...] = ()
    newest_hash: str | None = None
    stats: dict[str, BreakpointStat] = msgspec.field(default_factory=dict)
    tail: tuple[TailCopy, ...] = ()
    frozen: tuple[TailCopy, ...] = ()
    stale_rent: int = 0
    watch: dict[str, RegionWatch] = msgspec.field(default_factory=dict)
    tokens: int = 0
    marked: tuple[str, ...] = ()
    opening: str = ""
    rewrite_odds: float | None = None
    rewrite_horizon: float | None = None
    newest_entry: str | None = None
    anchored: str = ""
    held: tuple[HeldMark, ...] = ()
    tail_held: dict[str, tuple[float, float]] = msgspec.field(default_factory=dict)

    def to_json(self) -> bytes:
        """The state as JSON bytes."""
        return msgspec.json.encode(self)

    @classmethod
    def from_json(cls, data: bytes | str) -> LayoutState:
        """Load a state saved with :meth:`to_json`."""
        return msgspec.json.decode(data, type=cls)


class Request(msgspec.Struct, frozen=True):
    """The provider-neutral request (see module docstring).

    ``blocks`` in prompt order; ``breakpoints`` planned markers (also mirrored on
    ``LayoutBlock.breakpoint``); ``ttl`` the TTL of the conversation markers; ``state`` the
    new :class:`LayoutState`; ``events`` the layout's decisions and warnings;
    ``prompt_cache_key`` the OpenAI routing key (see :func:`regio.layout.prompt_cache_key`);
    ``min_cache_tokens`` the minimum cacheable prefix the planner used; ``total_tokens`` the
    sum of the blocks' tokens: left at ``-1`` it is summed once when the request is built (a
    builder that knows the total, like :func:`regio.layout.assemble`, passes it; a
    ``msgspec.structs.replace`` that changes ``blocks`` must pass the new total or ``-1``).
    """

    strategy: str
    blocks: tuple[LayoutBlock, ...]
    breakpoints: tuple[Breakpoint, ...] = ()
    ttl: Ttl = "5m"
    state: LayoutState = msgspec.field(default_factory=LayoutState)
    events: tuple[LayoutEvent, ...] = ()
    prompt_cache_key: str = ""
    min_cache_tokens: int = DEFAULT_MIN_CACHE_TOKENS
    total_tokens: int = -1

    def __post_init__(self) -> None:
        if self.total_tokens < 0:
            msgspec.structs.force_setattr(self, "total_tokens", sum(map(_TOKENS, self.blocks)))

    @property
    def tokens(self) -> int:
        """Total prompt tokens (precomputed: O(1))."""
        return self.total_tokens

    def level(self, level: str) -> tuple[LayoutBlock, ...]:
        """The blocks of one level, in order."""
        return tuple(b for b in self.blocks if b.level == level)

    def prefix_tokens(self, index: int) -> int:
        """Tokens of blocks ``0..index`` inclusive."""
        return sum(b.tokens for b in self.blocks[: index + 1])
