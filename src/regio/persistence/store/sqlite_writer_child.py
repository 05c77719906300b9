"""The child side of a SQLite store's writer process
(:mod:`regio.persistence.store.sqlite_writer`): started as ``sys.executable -c`` :data:`PROGRAM`,
it opens the file, says whether it could, then runs each write it receives in one
transaction, in the order received, and answers each with its call id, until the caller closes
the connection, sends ``None`` or dies.

Messages (pickled, :class:`multiprocessing.connection.Connection` framing): in, ``(call id,
pickled (fn, args))`` (a call whose function does not load here gets its error as its
answer) or ``None``; out, ``(call id, ok, result or exception, CPU seconds)`` (the first, for the
opening, has call id ``-1``). An exception that does not pickle comes back as a
``RuntimeError`` naming it, so every call gets an answer.
"""

from __future__ import annotations

import pickle
import signal
import time
from multiprocessing.connection import Connection
from typing import Any

from .sqlitedb import connect, transaction

__all__ = ["PROGRAM", "main", "serve"]

#: The child's program: the parent's import path (``argv[1]``, JSON), then :func:`main` with
#: the socket's descriptor, the file and the timeout. Not :mod:`multiprocessing`, whose
#: children import the caller's main module again (a script without a ``__main__`` guard
#: would start itself).
PROGRAM = (
    "import json, sys; sys.path[:0] = json.loads(sys.argv[1]); "
    "from regio.persistence.store.sqlite_writer_child import main; main(sys.argv[2:])"
)


#: Results that always load back as they were pickled.
_PLAIN = (int, float, str, bytes, type(None))


def _answer(out: tuple[int, bool, Any, float]) -> bytes:
    """``out`` pickled (module doc), an exception that does not pickle replaced. What could
    fail to load in the caller's reader (an exception whose class cannot be rebuilt from its
    pickle, any other object) is loaded back here first; the stores' results (numbers,
    ``None``) are not: most answers are pickled once."""
    try:
        data = pickle.dumps(out)
        if not isinstance(out[2], _PLAIN):
            pickle.loads(data)
        return data
    except Exception as exc:  # any pickling failure
        error = RuntimeError(f"{out[2]!r} (not passed back: {exc})")
        return pickle.dumps((out[0], False, error, out[3]))


def serve(path: str, timeout: float, conn: Connection) -> None:
    """The child's loop (module doc). ``SIGINT`` and ``SIGTERM`` are ignored: a terminal's
    Ctrl-C and a service manager's stop reach the whole process group, and the caller
    finishes its requests first; the child ends when the caller closes the connection."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        db = connect(path, timeout=timeout, schema="")
    except Exception as exc:  # passed back to the caller
        conn.send_bytes(_answer((-1, False, exc, 0.0)))
        return
    conn.send_bytes(_answer((-1, True, None, 0.0)))
    while True:
        try:
            message = conn.recv_bytes()
        except (EOFError, OSError):
            break
        work = pickle.loads(message)  # the parent's own envelope: ``None`` or (id, bytes)
        if work is None:
            break
        call, payload = work
        cpu = time.thread_time()
        try:  # a function this process cannot import fails its own call, not the child
            fn, args = pickle.loads(payload)
            ok, value = True, transaction(db, fn, args)
        except Exception as exc:  # passed back to the caller
            ok, value = False, exc
        try:
            conn.send_bytes(_answer((call, ok, value, time.thread_time() - cpu)))
        except OSError:
            break
    db.close()


def main(argv: list[str]) -> None:
    """The child's entry: ``[socket descriptor, path, timeout]`` (:data:`PROGRAM`)."""
    fd, path, timeout = argv
    serve(path, float(timeout), Connection(int(fd)))
