"""``--request-log PATH``: one JSON line per request, for operators and for checking leases.

Each line: ``session``, ``worker`` (the process id), ``leased`` / ``released`` (when the
request took and gave back its session's lease, seconds since the epoch), ``committed``
(whether its work was saved), ``compacted``, ``repairs`` (the changes the repair of the
client's history made, by action: ``{"call_closed": 1}``), ``status`` (the upstream's),
``items`` (the client history items the session holds after it), ``client_tokens`` /
``upstream_tokens``, ``passthrough`` (a request sent upstream unmanaged: ``{"reason":
"unreadable_item", "place": "messages[1]: ..."}``; a request of no session, another path or
one unreadable before its session was found, has ``session`` null and only ``status`` and
``passthrough``), ``added_cpu_ms`` (the proxy's own CPU time for the request, with the CPU
its SQLite store's writer process spent on the request's writes: :func:`own_cpu`) and
``added_ms`` (the wall time the proxy added: reading the request, finding and leasing the
session, laying out, answering regio's tools, committing, waiting for a compaction that ran
beside the upstream call when it outlasted it; not the upstream's time), ``beside_ms`` (the
wall time of a compaction run beside the upstream call, while the model generated) and, with
``--summarizer upstream``, ``summary_calls`` / ``summary_fallbacks`` / ``summary_input_tokens``
/ ``summary_output_tokens`` (the summary requests the request's compactions sent upstream, the
summaries the offline summarizer wrote instead, their reported usage:
:mod:`regio.proxy.summaries`; zero otherwise). No header, no key, no content. Lines are
appended with one ``write`` each (``O_APPEND``), so the workers
of one machine can share a file.

**Where ``added_ms`` went** (:class:`Waits`; milliseconds, wall time unless named CPU). These
parts do not overlap and sum to ``added_ms`` (up to the rounding of each to 3 decimals):

* ``read_ms``: parsing the client's body on the event loop (JSON, digests, the session key);
  after the body was received.
* ``lease_wait_ms``: waiting on the event loop for the session's lease another request held.
* ``compaction_wait_ms``: a step waiting for the compaction run beside the upstream call (the
  part of ``beside_ms`` the request waited for, plus the loop's turn back).
* ``queue_ms``: for each trip to a worker thread, from the ``run_sync`` call to the step starting
  in its thread: one pass of the event loop (anyio's ``run_sync`` yields to the loop before it
  asks the limiter, so a busy loop shows here too), waiting for a free slot of the
  ``--threads`` limiter, the thread's hand-over and the thread getting the interpreter lock.
* ``thread_ms``: the steps' wall time in their threads, less the commit.
* ``commit_ms``: saving the session's work to the store (``Turn.commit``, in its thread).
* ``loop_lag_ms``: for each trip, from the step returning in its thread to the request's
  coroutine running again on the event loop: the result handed to the loop (which needs the
  interpreter lock) and the loop running other callbacks first.
* ``other_ms``: the rest (``added_ms`` minus the parts above: the bookkeeping between them).

Parts of those parts, not summed: ``thread_cpu_ms`` (the CPU time of ``thread_ms``'s work, the
threads' ``time.thread_time``; ``thread_ms`` minus it is time its thread was not running: the
interpreter lock held by others, or blocked on a lock or the disk), ``commit_cpu_ms`` (the same
for ``commit_ms``), ``store_lock_ms`` (of ``thread_ms`` + ``commit_ms``: waiting for the SQLite
stores' in-process locks (the file's one writer lock and each connection's own), plus the whole
time of their ``BEGIN`` statements, which wait in SQLite's busy handler only for another
process writing the file; some microseconds when nothing waits;
:func:`regio.persistence.store.sqlitedb.lock_waited`; 0 with Redis; with ``--store-writer
process``, for writes only the wait to send to the writer process (and to start one): its queue
and ``BEGIN`` statements are in ``commit_ms`` and ``thread_ms``; reads count as before). Apart from
``added_ms``: ``body_ms`` (receiving the client's body, before ``added_ms`` starts),
``offloads`` (the trips to a worker thread) and ``offloads_queued`` (those that found no free
limiter slot when called).
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import attrs

from regio.persistence.store.sqlite_writer import writer_cpu
from regio.persistence.store.sqlitedb import lock_waited

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar, TypeVarTuple, Unpack

    import anyio

    #: A step's result and its arguments (typing only: ``TypeVarTuple`` is Python 3.11+).
    T = TypeVar("T")
    Ts = TypeVarTuple("Ts")

__all__ = ["ADDED_PARTS", "WAIT_DETAILS", "Waits", "log_request"]

#: The request log's parts of ``added_ms``, which sum to it (module doc), in report order.
ADDED_PARTS = (
    "read_ms",
    "lease_wait_ms",
    "compaction_wait_ms",
    "queue_ms",
    "thread_ms",
    "commit_ms",
    "loop_lag_ms",
    "other_ms",
)
#: Its parts of parts (not summed) and the body's time before ``added_ms`` (module doc).
WAIT_DETAILS = ("thread_cpu_ms", "commit_cpu_ms", "store_lock_ms", "body_ms")


def own_cpu() -> float:
    """This thread's CPU seconds so far, with what the store's writer process spent on its
    transactions (:func:`regio.persistence.store.sqlite_writer.writer_cpu`): the proxy's own
    CPU, wherever its SQLite writes run; a counter, as ``time.thread_time``."""
    return time.thread_time() + writer_cpu()


@attrs.define
class Waits:
    """Where one request's ``added_ms`` went (module doc), in seconds as measured."""

    body: float = 0.0
    read: float = 0.0
    lease_wait: float = 0.0
    compaction_wait: float = 0.0
    queue: float = 0.0
    steps: float = 0.0  # the steps' wall time in their threads, commit included
    steps_cpu: float = 0.0
    commit: float = 0.0
    commit_cpu: float = 0.0
    store_lock: float = 0.0
    loop_lag: float = 0.0
    offloads: int = 0
    offloads_queued: int = 0

    async def offload(
        self, limiter: anyio.CapacityLimiter, fn: Callable[[Unpack[Ts]], T], *args: Unpack[Ts]
    ) -> T:
        """``fn(*args)`` in a worker thread under ``limiter``, its trip timed (module doc)."""
        called = time.perf_counter()
        self.offloads += 1
        self.offloads_queued += limiter.available_tokens < 1
        marks = [0.0, 0.0]  # when fn started and returned in its thread

        def timed() -> T:
            marks[0], cpu, lock = time.perf_counter(), own_cpu(), lock_waited()
            try:
                return fn(*args)
            finally:
                self.steps_cpu += own_cpu() - cpu
                self.store_lock += lock_waited() - lock
                marks[1] = time.perf_counter()

        try:
            return await anyio.to_thread.run_sync(timed, limiter=limiter)
        finally:
            resumed = time.perf_counter()
            if marks[1]:
                self.queue += marks[0] - called
                self.steps += marks[1] - marks[0]
                self.loop_lag += resumed - marks[1]
            else:  # never ran (cancelled while waiting for a thread)
                self.queue += resumed - called

    def fields(self, added: float) -> dict[str, float | int]:
        """The request log's fields (module doc) for a request that added ``added`` seconds."""
        summed = (
            self.read,
            self.lease_wait,
            self.compaction_wait,
            self.queue,
            self.steps - self.commit,
            self.commit,
            self.loop_lag,
        )
        seconds = (*summed, max(0.0, added - sum(summed)))
        details = (self.steps_cpu - self.commit_cpu, self.commit_cpu, self.store_lock, self.body)
        names = (*ADDED_PARTS, *WAIT_DETAILS)
        out: dict[str, float | int] = {
            name: round(v * 1000, 3) for name, v in zip(names, (*seconds, *details), strict=True)
        }
        return out | {"offloads": self.offloads, "offloads_queued": self.offloads_queued}


def log_request(path: str | None, **fields: Any) -> None:
    """Append one line with ``fields`` (plus ``worker`` and ``released``) to ``path`` (``None``:
    nothing)."""
    if not path:
        return
    line = json.dumps({"worker": os.getpid(), "released": time.time(), **fields}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
