"""A request's blocking steps, grouped so that each group is one trip to a worker thread.

Every trip from the event loop to a worker thread and back waits for a free thread and for the
interpreter (the threads and the loop share it; a thread busy with a compaction holds it for
its switch interval at a time), and that wait grows with the worker's load, not with the
request's own work. So the steps that follow each other with nothing for the loop to do in
between run in one trip:

* :func:`open_session`: find the session (``Directory.resolve``), take its lease with one try
  and open it (``Directory.open``). Only a lease another request holds sends the request back
  to the loop, to wait for it there (:func:`regio.persistence.store.acquire_async`: the loop
  serves other requests meanwhile).
* :func:`end_turn`: the llama.cpp slot prediction, ``Turn.finish`` and ``Turn.commit``, the
  worker's warm engine, its digests and the metrics, then the lease given back.

Nothing here runs on the event loop: the stores' calls block.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from regio.errors import RegioError
from regio.persistence.store import SessionLeasedError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from regio.persistence.store import SessionLease

    from .records import RequestStat
    from .replies import Reply
    from .sessions import Handle, Target
    from .state import ProxyState
    from .summaries import SummaryTally
    from .turn import Turn

__all__ = ["end_turn", "open_session", "opened"]

log = logging.getLogger("regio.proxy")


def opened(
    state: ProxyState, target: Target, lease: SessionLease, incoming: Sequence[bytes], api: str
) -> Handle | None:
    """``Directory.open`` of ``target`` under ``lease``; the lease is given back when the request
    no longer extends the session (``None``: resolve again) or the open fails."""
    try:
        handle = state.directory.open(target, lease, incoming, api)
    except BaseException:
        lease.release()
        raise
    if handle is None:
        lease.release()
    return handle


def open_session(
    state: ProxyState, key: str, header: str | None, incoming: Sequence[bytes], api: str
) -> tuple[Target, Handle | None]:
    """The session of a request (module doc): its target and its handle under its lease, or the
    target and ``None`` when another request holds its lease (the caller waits for it). Raises
    what ``Directory.resolve`` and ``Directory.open`` raise."""
    while True:
        target = state.directory.resolve(key, header, incoming)
        try:
            lease = state.store.lease(target.id, ttl=state.config.lease_seconds, wait=0)
        except SessionLeasedError:
            return target, None
        handle = opened(state, target, lease, incoming, api)
        if handle is not None:
            return target, handle


def end_turn(
    state: ProxyState,
    turn: Turn,
    reply: Reply | None,
    status: int,
    sent: dict[str, Any],
    summary: SummaryTally,
    lost: Callable[[], bool],
    unbind: Callable[[], None],
) -> tuple[bool, RequestStat | None]:
    """Finish and commit ``turn`` (module doc), then ``unbind()`` (the request's summarizer) and
    give its lease back: ``(committed, stat)``; ``committed`` is false when the lease was lost
    (``lost()``) or the store refused (logged; ``stat`` is then ``None``). ``sent``: the last
    body sent upstream (the slot prediction's). A lease the store fails to release is logged
    (it lapses by itself after ``--lease-seconds``)."""
    handle = turn.handle
    try:
        try:
            predicted = None
            if state.slot is not None and reply is not None and reply.raw is not None:
                predicted = state.slot.predict(sent, reply.raw)
            stat = turn.finish(reply, status, predicted, summary)
            ok = not lost() and turn.commit(state.records, state.store, stat)
        except RegioError as exc:
            state.directory.engines.drop(handle.id)
            log.warning("session %s: not committed (%s)", handle.id, exc)
            return False, None
        if ok:
            state.directory.engines.put(handle.id, turn.engine, handle.prediction)
            state.directory.digests.remember(handle.id, turn.incoming)
            state.metrics.record(handle.id, turn.client.api, stat)
        else:
            state.directory.engines.drop(handle.id)
            log.warning("session %s: lease lost, request not committed", handle.id)
        return ok, stat
    finally:
        unbind()  # before the lease goes: the next request binds its own
        try:
            handle.lease.release()
        except RegioError as exc:
            log.warning("session %s: lease not released (%s)", handle.id, exc)
