"""The originals of relieved results: what a relief edit replaced, given back.

A relief stage replaces a block's content, never the block, and the transcript keeps every
message as admitted (results changed on admission are kept in
:class:`regio.session._reliefbook.ReliefBook`), so the original of every relieved result is found
again:

* :func:`with_originals` -- a summarizer's input with every edited block given back its
  original content (``summarize_originals``);
* :func:`original_result` -- the result of a call as it was received;
* :func:`restore` -- the ``context_restore`` tool: the original text byte for byte, or a
  message saying what is wrong.

A result a ``park`` capture shortened to a stub (:class:`regio.capture.rules.ParkRule`) was
admitted as the stub: the output is the parked write the transcript recorded with that stub
just before that message (:meth:`regio.session._transcript.Transcript.parked_before`), and a
restore brings it back once it has left its region (displaced by a newer park, reclaimed,
released with its turn).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from regio.content import Block, Entry, Text, ToolResult
from regio.policies import relief as rp
from regio.regions import (
    PARKED_ADMITTED,
    PARKED_CALL,
    PARKED_STUB,
    SlidingWindow,
    is_parked_stub,
    parked_for,
)
from regio.session._session import Session
from regio.session._transcript import TranscriptRecord

__all__ = ["missing_original", "original_result", "restore", "with_originals"]


def missing_original(originals: dict[str, ToolResult], call_id: str) -> Exception:
    """The :class:`regio.persistence.store.SessionStoreError` of an original the session kept on
    admission (the transcript record of the call's result says so, ``TranscriptRecord.kept``)
    that ``originals`` (an :class:`regio.session._reliefbook.Originals`, named by its
    ``where``) no longer holds: its stored records were deleted or lost. The message names the
    call, says the transcript holds only the shortened result, and what to do (the agent reads
    it from ``context_restore``)."""
    from regio.errors import SessionStoreError

    where = getattr(originals, "where", "this session")
    return SessionStoreError(
        f"{where}: the original of call {call_id!r} is missing: its result was "
        "shortened on admission (trimmed or routed) and kept whole as a relief original, which "
        "the session no longer holds (its stored records were deleted or lost). The "
        "conversation holds only the shortened result, which is not the original: call the "
        "tool again for its full result, or restore the session from a file save"
    )


def with_originals(c: Session, entries: Sequence[Entry]) -> list[Entry]:
    """``entries`` with every block a relief edit changed given back its original content
    (the summarizer's input with ``summarize_originals``: the summary covers what the turns
    really held, not placeholders).

    Only the entries a relief stage edited are looked up, each as its own admitted message
    (:meth:`regio.session._transcript.Transcript.message` by entry id and turn), so after a
    lazy load only those turns' stored records are decoded, never the whole transcript.
    Only with ``summarize_originals``: by default the summarizer reads what the conversation
    holds (placeholders with their salient items), and ``entries`` come back unchanged."""
    policy = c.options.relief
    if policy is None or not policy.summarize_originals:
        return list(entries)
    out = []
    for entry in entries:
        if rp.CLEARED_META not in entry.meta and rp.TRIMMED_META not in entry.meta:
            out.append(entry)
            continue
        admitted = c.transcript.message_record(entry.id, turn=entry.turn)
        blocks = list(entry.blocks)
        texts = 0  # the Text blocks before block j (the k-th Text of the admitted message)
        for j, b in enumerate(blocks):
            if isinstance(b, ToolResult):
                original = _admitted_result(c, admitted, b.tool_use_id)
                if original is not None:
                    blocks[j] = original
            elif isinstance(b, Text):
                blocks[j] = _admitted_text(admitted, texts) or b
                texts += 1
        out.append(msgspec.structs.replace(entry, blocks=tuple(blocks)))
    return out


def _admitted_result(
    c: Session, admitted: TranscriptRecord | None, call_id: str
) -> ToolResult | None:
    """The result of ``call_id`` as received: kept by admission, in the ``admitted`` message
    (the entry's own transcript record) unless it says an original was kept (then a missing
    one raises: :func:`_kept`), else the session's index; a park stub gives the output it
    stood for (module doc)."""
    found = _kept(c, call_id, admitted)
    entry = admitted.entry if admitted is not None else None
    for b in entry.blocks if entry is not None and found is None else ():
        if isinstance(b, ToolResult) and b.tool_use_id == call_id:
            found = b
            break
    if found is None:
        found = original_result(c, call_id)
    output = _parked_output(c, call_id, found.content, admitted) if found is not None else None
    if found is None or output is None:
        return found
    return msgspec.structs.replace(found, content=output.text)


def _kept(c: Session, call_id: str, record: TranscriptRecord | None) -> ToolResult | None:
    """The original kept for ``call_id`` (``None``: none). Raises
    :class:`regio.persistence.store.SessionStoreError`
    (:func:`missing_original`)
    when there is none but ``record``, the transcript record of the message carrying the
    call's result, says admission kept one: that message holds the shortened result, never
    to be taken for the original."""
    originals = c.book.relief.originals
    kept = originals.get(call_id)
    if kept is None and record is not None and call_id in record.kept:
        raise missing_original(originals, call_id)
    return kept


def _admitted_text(admitted: TranscriptRecord | None, k: int) -> Block | None:
    """The ``k``-th text block of the ``admitted`` message (a block only a relief stage
    changed; results dropped from an entry since never shift the text blocks)."""
    entry = admitted.entry if admitted is not None else None
    texts = [b for b in entry.blocks if isinstance(b, Text)] if entry is not None else []
    return texts[k] if k < len(texts) else None


# ----- restore -----------------------------------------------------------------------------
def original_result(c: Session, call_id: str) -> ToolResult | None:
    """The result of call ``call_id`` as it was received (``None``: no such result): its kept
    original, else the transcript's (the session's index: no scan). Raises
    :class:`regio.persistence.store.SessionStoreError` when the transcript's is shortened and its
    original is missing (:func:`_kept`)."""
    kept = c.book.relief.originals.get(call_id)
    if kept is not None:
        return kept
    _kept(c, call_id, c.transcript.result_record(call_id))
    return c.transcript.tool_result(call_id)


def restore(c: Session, call_id: str) -> tuple[str, bool]:
    """``(text, ok)`` for ``context_restore``: the original result of ``call_id`` byte for
    byte, or a message saying what is wrong (an unknown id, a result that is in the
    conversation unchanged, a parked output still in its region). A park stub stands for its
    output (module doc). While the call's group is in the window (the window's call
    index), its newest result entry is read from the window's result index (O(1) amortised,
    the oldest call as the newest), and the original is that entry's admitted message, looked
    up by entry id and turn (:meth:`regio.session._transcript.Transcript.message`): after a
    lazy load only that turn's stored records are decoded, so the cost does not grow with the
    session. A call that has left the window has no live result; its original comes from the
    transcript's index (the first such lookup after a lazy load decodes the stored
    records). An original kept on admission that the session no longer holds (its stored
    records deleted or lost) raises :class:`regio.persistence.store.SessionStoreError` naming the
    call (:func:`missing_original`; ``context_restore`` hands the agent
    its text), never the transcript's shortened result."""
    live = _live_result_entry(c, call_id)
    original = _live_original(c, live, call_id) if live is not None else None
    if original is None:
        original = original_result(c, call_id)
    if original is None:
        return (
            f"no tool result with call_id {call_id!r} in this session; the call ids are the "
            "ones named in the placeholders ('result of <tool> call <call_id> cleared')",
            False,
        )
    if is_parked_stub(original.content):
        admitted = (
            c.transcript.message_record(live.id, turn=live.turn) if live is not None else None
        ) or c.transcript.result_record(call_id)  # a repair's closer is no message record
        output = _parked_output(c, call_id, original.content, admitted)
        region = _holding(c, output) if output is not None else None
        if region is not None:
            return (
                f"the output of call {call_id!r} is in the context unchanged, parked in "
                f"region {region!r}",
                False,
            )
        if output is not None:  # else the result as received (a text that reads as a stub)
            original = msgspec.structs.replace(original, content=output.text)
    block = _result_block(live, call_id) if live is not None else None
    if block is not None and block.content == original.content:
        return f"the result of call {call_id!r} is in the conversation unchanged", False
    return original.content, True


def _parked_output(
    c: Session, call_id: str, content: str, admitted: TranscriptRecord | None
) -> Entry | None:
    """The output a ``park`` capture took from the result ``content`` of ``call_id`` (module
    doc; ``None``: ``content`` is no park stub of that call, or ``admitted``, the transcript
    record of the message that admitted it, is not known): one of the tool outputs parked with
    that stub for that message
    (:meth:`regio.session._transcript.Transcript.parked_before`): the last whose recorded
    admitted id (:data:`regio.regions.PARKED_ADMITTED`, a live capture's) is ``call_id``. Writes
    without it (the bench's replay, sessions saved before it was recorded) are matched by
    rank: a message's results are parked in their order, just before it, so the call's rank
    among those results names its output among the last such writes (a refused admission
    leaves earlier ones); else, among writes without it, the last sent with ``call_id``
    itself, or the one write the id may have become on admission
    (:func:`regio.regions.parked_for`: a doubt returns nothing, never another call's output)."""
    if admitted is None or admitted.entry is None:
        return None
    writes = [
        entry
        for entry in c.transcript.parked_before(content, admitted.entry.id, admitted.turn)
        if isinstance(entry.meta.get(PARKED_CALL), str) and entry.meta[PARKED_CALL]
    ]
    exact = [e for e in writes if e.meta.get(PARKED_ADMITTED) == call_id]
    if exact:  # the capture recorded the id the engine admitted: the last (a retry's) is it
        return exact[-1]
    ranks = [
        b.tool_use_id
        for b in admitted.entry.blocks
        if isinstance(b, ToolResult) and b.content == content
    ]
    if call_id in ranks and len(ranks) <= len(writes):
        # the last writes are this message's: earlier ones were written for an admission
        # that was refused (a retry writes again); one recorded for another call is not it
        pick = writes[len(writes) - len(ranks) + ranks.index(call_id)]
        if pick.meta.get(PARKED_ADMITTED) in (None, call_id):
            return pick
    unrecorded = [e for e in writes if PARKED_ADMITTED not in e.meta]
    same = [e for e in unrecorded if e.meta[PARKED_CALL] == call_id]
    if same:  # sent with this very id: the last (a retry's)
        return same[-1]
    mine = [e for e in unrecorded if parked_for(e, call_id)]
    return mine[0] if len(mine) == 1 else None  # a doubtful match returns nothing


def _holding(c: Session, output: Entry) -> str | None:
    """The region of the window still holding the parked ``output``, or an output parked
    again with the same text (``None``: none)."""
    stub = output.meta.get(PARKED_STUB)
    for region in c.window.regions:
        if isinstance(region, SlidingWindow):
            continue
        for e in region.entries:
            if e.id == output.id or (e.meta.get(PARKED_STUB) == stub and e.text == output.text):
                return region.name
    return None


def _result_block(entry: Entry | None, call_id: str) -> ToolResult | None:
    """The last result of ``call_id`` in ``entry`` (``None``: none)."""
    for b in reversed(entry.blocks) if entry is not None else ():
        if isinstance(b, ToolResult) and b.tool_use_id == call_id:
            return b
    return None


def _live_original(c: Session, live: Entry, call_id: str) -> ToolResult | None:
    """The result of ``call_id`` as received, for its ``live`` entry: kept by admission, else
    in the entry's own admitted message (by entry id and turn; ``None``: not there), unless
    that message says an original was kept (:func:`_kept` raises)."""
    kept = c.book.relief.originals.get(call_id)
    if kept is not None:
        return kept
    record = c.transcript.message_record(live.id, turn=live.turn)
    _kept(c, call_id, record)
    return _result_block(record.entry if record is not None else None, call_id)


def _live_result_entry(c: Session, call_id: str) -> Entry | None:
    """The newest conversation entry holding a result of ``call_id`` (``None``: none, or the
    call's group has left the window, or the newest mention of the call in the conversation
    is the assistant message that made it: a result comes after its call). Summary entries
    are passed over. Read from the window's index of the entries mentioning each call
    (:meth:`regio.regions.Window.result_index`): O(1) amortised however far back the call is;
    the answer is the backward walk's (:func:`regio.regions.indexes.results.newest_result_scan`)."""
    conv = c.window.conversation
    if conv is None or c.window.call_group(call_id) is None:
        return None
    return c.window.result_index(conv).newest_result(conv.entries, call_id)
