"""What changes while an engine runs, apart from the window and the compaction book:
:class:`SessionState` (the last request and its estimate, the layout state carried to the next
request, the overflow retry flag). Options that never change are
:class:`regio.session._options.EngineOptions`.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import attrs
import msgspec

from regio.layout import LayoutState, RenderLog, Request
from regio.regions.entrylist import EntryList, EntryMark, appended_since

from ._callnames import CallNames

if TYPE_CHECKING:
    from regio.regions import Region

__all__ = ["ANCHOR_CHARS", "EARLIER_ANCHORS", "AdapterCursor", "RegionHashes", "SessionState"]

#: Second anchors an :class:`AdapterCursor` keeps (the marks before its newest).
EARLIER_ANCHORS = 32
#: Hex characters of a digest a second anchor keeps (64 bits).
ANCHOR_CHARS = 16


@attrs.define(eq=False)
class RegionHashes:
    """The content hashes of one window's regions, kept from request to request: a region
    whose entry list was only appended to since the last call (the same
    :class:`regio.regions.entrylist.EntryList`, the same ``rewrite_epoch``) costs the digests of
    its new entries, so :func:`regio.engine._requests.request_fingerprint` is O(new) per
    request. Each value equals :meth:`regio.regions.Region.content_hash` (sha256, hex, over the
    entry digests in order)."""

    #: region name -> (the entry list's mark, sha256 state, hex digest)
    _seen: dict[str, tuple[EntryMark, Any, str]] = attrs.field(factory=dict)

    def content_hash(self, region: Region) -> str:
        """``region.content_hash()``, from what was hashed before when only appended to."""
        entries = region.entries
        if not isinstance(entries, EntryList):
            return str(region.content_hash())
        found = self._seen.get(region.name)
        start = appended_since(entries, found[0]) if found is not None else None
        if found is not None and start is not None:
            if start == len(entries):
                return found[2]
            h = found[1].copy()
        else:
            h, start = hashlib.sha256(), 0
        for e in entries[start:]:
            h.update(e.digest.encode())
        digest = h.hexdigest()
        mark = EntryMark(entries, entries.rewrite_epoch, len(entries))
        self._seen[region.name] = (mark, h, digest)
        return digest


class AdapterCursor(msgspec.Struct, omit_defaults=True):
    """Where a framework adapter is in its framework's own message history (saved with the
    engine, so a new adapter over a loaded engine continues where the last one stopped, never
    re-admitting what the engine already holds; :mod:`regio.adapters.cursor`).

    ``position``: messages of the framework's history already in the engine; ``digest``:
    sha256 (hex) of the canonical form of the message at ``position - 1`` (the adapter's own
    digest, so a history that was rewritten or does not carry the earlier turns is recognised);
    ``system``: the caller's system text the adapter keeps (LangChain: the text last written to
    a pinned region; pydantic-ai: the agent's ``system_prompt``, which a history carrying an
    earlier window holds only inside it; ``None``: none); ``window_read``: the framework's
    declared context window was read; ``earlier``: the second anchors, ``(position, digest
    prefix)`` of the marks before this one, newest first (at most :data:`EARLIER_ANCHORS`, the
    first :data:`ANCHOR_CHARS` hex characters of each digest), for a history that left out the
    message at ``position - 1`` (ADK leaves a call that never got its response out of the
    contents it builds; a run resumed from the ``message_history`` saved before a stopped run
    ends before it); ``open_calls``: ``(call id, tool name)`` of the calls of the last model
    message the adapter admitted that no result has answered yet, oldest first (a framework
    whose model sends calls without ids, Gemini through ADK, pairs their results by order and
    name); ``assigned``: call ids the adapter has made so far (for calls without one)."""

    position: int = 0
    digest: str = ""
    system: str | None = None
    window_read: bool = False
    earlier: list[tuple[int, str]] = msgspec.field(default_factory=list)
    open_calls: list[tuple[str, str]] = msgspec.field(default_factory=list)
    assigned: int = 0


@attrs.define(eq=False, kw_only=True)
class SessionState:
    """Request-to-request state of one engine. ``last_estimate`` is the raw token estimate of
    ``last_request`` (fed to the calibration by ``Engine.observe``); ``overflow_retry`` is set
    after an overflow recovery and cleared by the next success or user message (a second
    refusal before then raises)."""

    layout_state: LayoutState | None = None
    #: The layout state the last request started from and the fingerprint of the window it
    #: was laid out for (:func:`regio.engine._requests.request_fingerprint`): a request on an
    #: unchanged window starts from ``layout_input`` again, so it renders the same bytes.
    layout_input: LayoutState | None = None
    layout_fingerprint: str | None = None
    #: The session's render log (what the layout and the renderers carry from request to
    #: request; reset at the one point where the conversation is rewritten). Not saved.
    render_log: RenderLog = attrs.field(factory=RenderLog, repr=False)
    #: The regions' content hashes the request fingerprint reads, kept incrementally. Not saved.
    region_hashes: RegionHashes = attrs.field(factory=RegionHashes, repr=False)
    last_request: Request | None = None
    last_estimate: int = 0
    last_provider: str = ""
    last_model: str = ""
    overflow_retry: bool = False
    #: The last forked summarizer request (:mod:`regio.compaction._forking`), ``None`` before one;
    #: what a bill of the compaction's own calls needs. Not saved.
    last_summary_request: Request | None = None
    #: Clock time (seconds) the last request was laid out at; ``None`` before one (saved).
    last_sent_at: float | None = None
    #: The window's next entry number when the last request was laid out: every entry
    #: numbered below it that is still in the window was in that request (saved).
    last_next_entry: int = 0
    #: Framework adapter name -> its :class:`AdapterCursor` (saved).
    adapters: dict[str, AdapterCursor] = attrs.field(factory=dict)
    #: The window's renamed calls (:mod:`regio.session._callnames`); ``None``: read from the
    #: entries at the next admission (after a load or a repair). Not saved.
    call_names: CallNames | None = attrs.field(default=None, repr=False)
    #: Where ``Engine.repair``'s check of the conversation's plain shape stopped (the entry
    #: list's mark) and its ``regio.engine._history.PlainScan`` there, while the shape is
    #: plain; ``None``: read the whole conversation at the next check. Not saved.
    plain_scan: tuple[EntryMark | None, Any] | None = attrs.field(default=None, repr=False)
