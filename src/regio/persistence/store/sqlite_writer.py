"""Where a SQLite store's write transactions run: in the calling thread
(:func:`regio.persistence.store.sqlitedb.transaction`, the default) or in a child process of
their own (:class:`WriterProcess`; ``regio proxy --store-writer process``).

**Why a process.** Python's ``sqlite3`` releases the interpreter lock around every step of
every statement and must take it back after; while other threads run Python, taking it back
waits for their switch interval (5 ms, :func:`sys.getswitchinterval`), often several of them
(the lock goes to whichever waiting thread the system wakes). A save is about ten statements
and holds the file's one writer lock (:mod:`regio.persistence.store.sqlitedb`) through all of
them, so in a worker whose threads lay out windows a save of 2-8 ms of CPU took 100-600 ms of
wall time and every writer queued behind it (``docs/proxy.md``, "Where the slowest requests
wait"). In a child process the transactions run one after another on an interpreter nobody
else uses.

**The protocol** (:mod:`regio.persistence.store.sqlite_writer_child`). The child is
``sys.executable`` with the caller's import path, joined to it by a socket pair.
:meth:`WriterProcess.run` sends ``(call id, fn, args)`` (pickled: ``fn`` a module-level
function, ``args`` picklable) and waits for its answer; the child runs ``fn(db, *args)`` in one
``BEGIN IMMEDIATE`` ... ``COMMIT`` transaction on its own connection, in the order received,
and sends back the result or the exception, which :meth:`~WriterProcess.run` raises in the
caller as the thread would have (the stores' errors pickle with their fields:
:meth:`regio.errors.SessionStoreError.__reduce__`). Several calls are in flight at once: a
reader thread hands each answer to its caller, so the child never waits for a caller to get
the interpreter lock back (a first version sent one call at a time under a lock, and the
holder's wait for the interpreter after each answer queued every other writer). Reads stay in
the caller's process, on its own connection (WAL: a read sees every committed write,
https://sqlite.org/wal.html). The child reports the CPU each transaction took;
:func:`writer_cpu` sums it per calling thread.

**Measured** (the proxy's steady-load benchmark, ``docs/proxy.md``, 2026-12-08: one 2-core
machine running the benchmark's client, its scripted upstream, the worker and the writer
process). The slowest 1% of requests spent less time saving (their ``commit_ms``, which with
the process includes the wait in the child's queue: 115-139 ms at the median in the thread,
71-85 ms with the writer process), but the added latency did not fall: p99 110-459 ms in three runs
with the process (the first, one call at a time, 415-459 ms) against 144-287 ms in two with
the thread, p50 18-31 against 16-24 ms; the child's CPU is taken from the worker on two
cores, and the slowest requests now wait for a thread and for the event loop instead. So the
thread is the default; the process is for a worker with a core to spare, where it is not
measured.

**One per file.** :func:`shared_writer` hands every store of the process on one file the
same child (the session store and the proxy's records), so no two connections of the process
wait in SQLite's busy handler for each other; it stops when the last of them closes.

**Failures.** A child that cannot open the file raises its ``sqlite3`` error in the caller
(the store names the file and the fix). A child that died (killed, out of memory) raises
:class:`regio.persistence.store.StoreUnavailableError` for each call in flight, whose write
may or may not have been committed (a session save is versioned: the next request finds the
stored version); the next call starts a new child. A caller interrupted while it waits leaves
its answer to be dropped; one interrupted while it sends ends that child (the stream may hold
part of a message). A call whose function or arguments do not pickle raises
:class:`regio.persistence.store.SessionStoreError` with nothing sent; one whose function the
child cannot import gets that error as its answer. A process forked after the writer started
never uses it (its calls raise :class:`StoreUnavailableError`; its copy of the connection is
closed, so the child still ends with the process that started it). The child exits when that
process closes the connection or dies, after the calls it has already received.
"""

from __future__ import annotations

import itertools
import json
import os
import pickle
import socket
import sqlite3
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable
from contextlib import suppress
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from .errors import SessionStoreError, StoreUnavailableError
from .sqlite_writer_child import PROGRAM
from .sqlitedb import WaitedLock

__all__ = ["SharedWriter", "WriterProcess", "shared_writer", "writer_cpu", "writer_for"]

_T = TypeVar("_T")

_spent = threading.local()


def writer_cpu() -> float:
    """Seconds of CPU the writer processes spent, in all, on this thread's transactions (their
    own CPU, which the caller's ``time.thread_time`` does not see); a counter: the difference
    of two readings is the writers' CPU between them. The proxy adds it to its own CPU per
    request (``added_cpu_ms``)."""
    return float(getattr(_spent, "s", 0.0))


class _Call:
    """One call in flight: set with ``(ok, result or exception, CPU seconds)``; ``ok`` is
    ``None`` when the child died first (the exception is the connection's)."""

    __slots__ = ("done", "out")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.out: tuple[bool | None, Any, float] = (None, None, 0.0)


class _Link:
    """One child: its process, the connection to it, the calls in flight and the thread that
    reads the answers."""

    def __init__(self, path: str, timeout: float) -> None:
        ours, theirs = socket.socketpair()
        try:
            argv = [sys.executable, "-c", PROGRAM, json.dumps([p for p in sys.path if p])]
            self.process = subprocess.Popen(
                [*argv, str(theirs.fileno()), path, repr(timeout)],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.sock = ours
        self.conn = Connection(os.dup(ours.fileno()))
        _links.add(self)
        self.pending: dict[int, _Call] = {}
        self.guard = threading.Lock()
        self.alive = True
        self.reader: threading.Thread | None = None
        try:
            _, ok, value, _ = pickle.loads(self.conn.recv_bytes())
        except Exception as exc:  # EOF, a closed socket, an answer that does not load
            self.stop(0.0)
            raise StoreUnavailableError(
                f"sqlite:{path}: the store's writer process did not start (exit status "
                f"{self.process.returncode}, {exc!r}); check that {sys.executable} imports regio"
            ) from exc
        if not ok:
            self.stop(5.0)
            raise value
        name = f"regio-sqlite-answers:{os.path.basename(path)}"
        self.reader = threading.Thread(target=self._read, name=name, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        error: BaseException
        try:
            while True:
                call_id, ok, value, cpu = pickle.loads(self.conn.recv_bytes())
                with self.guard:
                    call = self.pending.pop(call_id, None)
                if call is not None:
                    call.out = (ok, value, cpu)
                    call.done.set()
        except Exception as exc:  # EOF, a closed socket, an answer that does not load
            error = exc
        with self.guard:
            self.alive = False
            calls, self.pending = list(self.pending.values()), {}
        for call in calls:
            call.out = (None, error, 0.0)
            call.done.set()

    def send(self, call_id: int, call: _Call, work: bytes) -> bool:
        """Put the call (``work``: its pickled function and arguments) in flight; the caller
        holds the writer's lock. ``False`` when this child is gone."""
        with self.guard:
            if not self.alive:
                return False
            self.pending[call_id] = call
        try:
            self.conn.send_bytes(pickle.dumps((call_id, work)))
        except BaseException as exc:
            # a broken pipe (the child is gone), or interrupted part-way: the stream may hold
            # part of a message, so this child is done with. Closing only our sending side
            # lets it answer the calls it already has (the reader hands the answers back)
            # and exit at the cut message.
            with self.guard:
                self.pending.pop(call_id, None)
                self.alive = False
            with suppress(OSError):
                self.sock.shutdown(socket.SHUT_WR)
            if isinstance(exc, OSError):
                return False
            raise
        return True

    def forget(self) -> None:
        """In a process forked from the one that started the child: close this copy of the
        connection (never shut down: the socket is the parent's too)."""
        self.alive = False
        with suppress(OSError):
            self.conn.close()
        with suppress(OSError):
            self.sock.close()

    def stop(self, wait: float) -> None:
        """Ask the child to stop after the calls it holds (``None``), close the connection
        and wait up to ``wait`` seconds before killing it."""
        with suppress(OSError):
            self.conn.send(None)
        with suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=wait)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.reader is not None:  # it reads the last answers, then the child's EOF
            self.reader.join(timeout=5.0)
        with suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # a reader still blocked wakes: EOF
        if self.reader is not None:
            self.reader.join(timeout=5.0)
        self.sock.close()
        self.conn.close()


class WriterProcess:
    """A child process running write transactions on the SQLite file ``path`` (module doc).
    ``timeout``: seconds a write waits for another process's lock. Raises the child's
    ``sqlite3.Error`` when it cannot open the file, :class:`StoreUnavailableError` when it
    does not start. Thread-safe."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        self.path = os.fspath(path)
        self.timeout = timeout
        self._lock = WaitedLock()  # sending and starting; its waits count in store_lock_ms
        self._ids = itertools.count()
        self._closed = False
        self._pid = os.getpid()
        self._link: _Link | None = _Link(self.path, timeout)
        _writers.add(self)

    @property
    def pid(self) -> int | None:
        """The child's process id (``None`` before a restart has started a new one)."""
        link = self._link
        return None if link is None or not link.alive else link.process.pid

    def run(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(db, *args)`` in one write transaction in the child; its result, or its
        exception raised here. Raises :class:`StoreUnavailableError` when the child died
        before it answered or this writer is closed."""
        if os.getpid() != self._pid:
            raise StoreUnavailableError(
                f"sqlite:{self.path}: this store was opened in the process this one was forked "
                "from; nothing was written. Open the store again in this process"
            )
        try:
            work = pickle.dumps((fn, args))
        except Exception as exc:  # a programming error, never the file's
            raise SessionStoreError(
                f"sqlite:{self.path}: this write cannot be passed to the writer process "
                f"({exc!r}); nothing was written"
            ) from exc
        call = _Call()
        with self._lock:
            if self._closed:
                raise StoreUnavailableError(
                    f"sqlite:{self.path}: the store's writer is closed; open the store again"
                )
            link = self._link
            if link is None or not link.send(next(self._ids), call, work):
                if link is not None:
                    link.stop(10.0)  # it answers the calls it holds, then exits
                self._link = link = _Link(self.path, self.timeout)
                call = _Call()  # the first may have been failed by the dead child's reader
                if not link.send(next(self._ids), call, work):
                    raise StoreUnavailableError(
                        f"sqlite:{self.path}: the store's writer process exited as it started; "
                        "nothing was written. Check the machine's memory and logs"
                    )
        call.done.wait()
        ok, value, cpu = call.out
        _spent.s = writer_cpu() + cpu
        if ok is None:
            raise StoreUnavailableError(
                f"sqlite:{self.path}: the store's writer process exited ({value!r}) during "
                "this write, which may or may not have been committed; the next write starts "
                "a new one. Check the machine's memory and logs"
            ) from value
        if not ok:
            raise value
        return value

    def close(self) -> None:
        """Stop the child once it has answered the calls in flight; idempotent. In a process
        forked from the one that started it, only marks this writer closed."""
        if os.getpid() != self._pid:
            self._closed = True
            return
        with self._lock:
            if self._closed:
                return
            self._closed = True
            link, self._link = self._link, None
        if link is not None:
            link.stop(30.0)


class _Shared:
    __slots__ = ("users", "writer")

    def __init__(self, writer: WriterProcess) -> None:
        self.writer = writer
        self.users = 0


_shared: dict[str, _Shared] = {}
_shared_guard = threading.Lock()
_writers: weakref.WeakSet[WriterProcess] = weakref.WeakSet()
_links: weakref.WeakSet[_Link] = weakref.WeakSet()


def _forked() -> None:
    """In a forked child: no writer of the parent's is used (each says so), their sockets are
    closed here (so a parent's writer still ends with its parent), the table starts empty."""
    global _shared_guard
    for writer in list(_writers):
        writer._link = None
    for link in list(_links):  # also one being started, or a dropped writer's
        link.forget()
    _writers.clear()
    _links.clear()
    _shared.clear()
    _shared_guard = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


class SharedWriter:
    """One store's handle on the process's :class:`WriterProcess` of a file
    (:func:`shared_writer`); :meth:`close` once."""

    __slots__ = ("_key", "_writer")

    def __init__(self, key: str, writer: WriterProcess) -> None:
        self._key = key
        self._writer: WriterProcess | None = writer

    def run(self, fn: Callable[..., _T], *args: Any) -> _T:
        """:meth:`WriterProcess.run` (raises :class:`StoreUnavailableError` after :meth:`close`)."""
        writer = self._writer
        if writer is None:
            raise StoreUnavailableError(f"sqlite:{self._key}: the store is closed; open it again")
        return writer.run(fn, *args)

    def close(self) -> None:
        """Let go of the child; the last handle of the file stops it."""
        with _shared_guard:
            writer = self._writer
            if writer is None:
                return
            self._writer = None
            entry = _shared.get(self._key)
            if entry is None or entry.writer is not writer:
                return  # a writer of the process this one was forked from
            entry.users -= 1
            if entry.users:
                return
            del _shared[self._key]
        entry.writer.close()


def shared_writer(path: str | os.PathLike[str], *, timeout: float = 30.0) -> SharedWriter:
    """A handle on this process's one writer process for the SQLite file ``path`` (module doc,
    "One per file"), started on first use. Raises the child's ``sqlite3.Error`` when it cannot
    open the file."""
    key = os.path.realpath(path)
    with _shared_guard:
        entry = _shared.get(key)
        if entry is None:
            entry = _shared[key] = _Shared(WriterProcess(key, timeout=timeout))
        entry.users += 1
        return SharedWriter(key, entry.writer)


def writer_for(
    path: str | os.PathLike[str], *, timeout: float, process: bool, db: sqlite3.Connection
) -> SharedWriter | None:
    """A store's writer: :func:`shared_writer` when ``process``, else ``None`` (its writes run
    in the caller's thread). ``db``, the store's own connection just opened, is closed when
    the writer cannot start, so a store that fails to open holds nothing open."""
    if not process:
        return None
    try:
        return shared_writer(path, timeout=timeout)
    except BaseException:
        db.close()
        raise
