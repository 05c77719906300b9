"""A SQLite store whose writes run in a child process (``SQLiteStore(path, process=True)``,
``regio proxy --store-writer process``) behaves as one whose writes run in the caller's thread:
the same results, the same errors with the same fields, nothing lost; a dead child costs one
write an error and the next write starts a new one; the child ends with its last store and with
its parent."""

from __future__ import annotations

import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.engine import Engine
from regio.errors import SessionStoreError
from regio.persistence.store import (
    SessionConflictError,
    SessionDamagedError,
    SessionLeasedError,
    SessionLostError,
    SessionRecords,
    SQLiteStore,
    StoreUnavailableError,
)
from regio.persistence.store.sqlite_writer import WriterProcess, _Link, shared_writer, writer_cpu
from regio.persistence.store.sqlite_writer_child import _answer
from store_turns import read_turn

BLUEPRINT = Path(__file__).resolve().parents[1] / "examples" / "blueprints" / "coding-agent.yaml"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped) counts as gone
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SQLiteStore, SQLiteStore]]:
    """A store writing in its thread and one writing in its process, on two files."""
    root = tmp_path_factory.mktemp("writers")
    here, there = SQLiteStore(root / "thread.db"), SQLiteStore(root / "process.db", process=True)
    yield here, there
    here.close()
    there.close()


def test_a_saved_session_loads_back_the_same_through_the_writer_process(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db", process=True)
    engine = Engine.from_blueprint(BLUEPRINT)
    engine.add_user("Read the files and fix the failing test")
    for turn in range(6):
        read_turn(engine, turn, 3)
        engine.save_to(store, "s")
    assert Engine.load_from(store, "s").snapshot() == engine.snapshot()
    assert store.sessions() == ["s"]
    assert store.delete("s") is True
    assert store.sessions() == []
    store.close()


def _records(saved: int) -> SessionRecords:
    """The records of a session's save number ``saved + 1``: one transcript record each."""
    return SessionRecords(
        head=b"head %d" % saved,
        transcript=[b"record %d" % saved],
        ledger=[],
        transcript_count=saved + 1,
        ledger_count=0,
        put={f"r/e{saved}": b"entry"},
        digests={f"r/e{saved}": "d"},
        drop=[f"r/e{saved - 1}"] if saved else [],
    )


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["lease", "renew", "release", "delete", "save"]),
        st.sampled_from(["t1", "t2"]),
    ),
    max_size=12,
)


def _outcome(store: SQLiteStore, session: str, op: str, token: str, version: list[int]) -> object:
    """What ``op`` returned or raised (its type and fields), comparable across the stores."""
    try:
        if op == "lease":
            left = store.try_lease(session, token, 30.0)
            return None if left is None else "held"
        if op == "renew":
            return store.renew_lease(session, token, 30.0)
        if op == "release":
            return store.release_lease(session, token)
        if op == "delete":
            return store.delete(session)
        records = _records(version[0])
        version[0] = store.save(session, records, expected=version[0], lease=token)
        return version[0]
    except SessionStoreError as exc:
        fields = {k: v for k, v in vars(exc).items() if k != "expires_in"}
        return (type(exc).__name__, sorted(fields.items()))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=_OPS, n=st.integers(0, 10**9))
def test_every_write_returns_or_raises_the_same_in_a_process_as_in_a_thread(
    pair: tuple[SQLiteStore, SQLiteStore], ops: list[tuple[str, str]], n: int
) -> None:
    here, there = pair
    session = f"s{n}-{len(ops)}"
    versions = ([0], [0])
    for op, token in ops:
        a = _outcome(here, session, op, token, versions[0])
        b = _outcome(there, session, op, token, versions[1])
        assert a == b, (op, token)


def test_a_conflict_comes_back_with_its_versions(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db", process=True)
    store.save("s", _records(0), expected=0)
    with pytest.raises(SessionConflictError) as caught:
        store.save("s", _records(0), expected=0)
    assert (caught.value.expected, caught.value.found, caught.value.session_id) == (0, 1, "s")
    with pytest.raises(SessionLostError) as lost:
        store.save("gone", _records(3), expected=3)
    assert lost.value.expected == 3
    store.close()


def test_a_lease_held_by_another_comes_back_with_the_seconds_it_has_left(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db", process=True)
    assert store.try_lease("s", "other", 30.0) is None
    with pytest.raises(SessionLeasedError) as caught:
        store.save("s", _records(0), expected=0, lease="mine")
    assert caught.value.expires_in is not None and 0 < caught.value.expires_in <= 30
    assert "nothing was written" in str(caught.value)
    assert store.sessions() == []
    store.close()


@pytest.mark.parametrize(
    "error",
    [
        SessionStoreError("m", session_id="s", key="k"),
        SessionConflictError("m", session_id="s", expected=1, found=2, key="k"),
        SessionLeasedError("m", session_id="s", expires_in=1.5),
        SessionLostError("m", session_id="s", expected=4),
        StoreUnavailableError("m", session_id="s"),
        SessionDamagedError("m"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_every_store_error_pickles_with_its_fields(error: SessionStoreError) -> None:
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error)
    assert str(back) == str(error)
    assert vars(back) == vars(error)


def _opened(tmp_path: Path) -> tuple[SQLiteStore, WriterProcess, int]:
    """A store writing in a process, its writer and the child's process id."""
    store = SQLiteStore(tmp_path / "s.db", process=True)
    assert store._process is not None
    writer = store._process._writer
    assert writer is not None and writer.pid is not None
    return store, writer, writer.pid


def _sleeping(db: object, seconds: float) -> float:
    """A write that takes ``seconds`` (run in the writer process)."""
    time.sleep(seconds)
    return seconds


def test_a_writer_that_dies_mid_write_fails_that_write_and_the_next_starts_another(
    tmp_path: Path,
) -> None:
    store, writer, first = _opened(tmp_path)
    assert store.try_lease("s", "tok", 30.0) is None
    errors: list[BaseException] = []

    def slow() -> None:
        try:
            writer.run(_sleeping, 5.0)
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    caller = threading.Thread(target=slow)
    caller.start()
    time.sleep(1.0)  # the child is in the write
    os.kill(first, signal.SIGKILL)
    caller.join(10)
    assert len(errors) == 1 and isinstance(errors[0], StoreUnavailableError)
    assert "may or may not have been committed" in str(errors[0])
    assert store.renew_lease("s", "tok", 30.0) is True  # what was committed before is there
    assert writer.pid not in (None, first)
    store.close()


def test_a_writer_killed_between_writes_costs_no_write_an_error(tmp_path: Path) -> None:
    store, writer, first = _opened(tmp_path)
    os.kill(first, signal.SIGKILL)
    assert _gone(first)
    for _ in range(3):  # whether or not its end was seen yet
        assert store.try_lease("s", "tok", 30.0) is None
    assert writer.pid not in (None, first)
    store.close()


def test_calls_from_many_threads_each_get_their_own_answer(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db", process=True)
    got: dict[int, object] = {}

    def lease(n: int) -> None:
        got[n] = (store.try_lease(f"s{n}", f"t{n}", 30.0), store.renew_lease(f"s{n}", "x", 1.0))

    threads = [threading.Thread(target=lease, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert got == {n: (None, False) for n in range(16)}
    assert all(store.try_lease(f"s{n}", "other", 30.0) is not None for n in range(16))
    store.close()


def test_the_writer_stops_with_the_last_store_of_its_file(tmp_path: Path) -> None:
    one = SQLiteStore(tmp_path / "s.db", process=True)
    two = SQLiteStore(tmp_path / "s.db", process=True)
    assert one._process is not None and two._process is not None
    writer = one._process._writer
    assert writer is not None and writer is two._process._writer  # one child per file
    pid = writer.pid
    assert pid is not None
    one.close()
    assert two.try_lease("s", "tok", 30.0) is None  # still served
    assert _alive(pid)
    two.close()
    assert _gone(pid)
    with pytest.raises(StoreUnavailableError, match="closed"):
        two.release_lease("s", "tok")


def test_a_writer_that_cannot_open_its_file_raises_in_the_caller(tmp_path: Path) -> None:
    with pytest.raises(sqlite3.OperationalError):
        WriterProcess(tmp_path / "no such folder" / "s.db")
    with pytest.raises(sqlite3.OperationalError):
        shared_writer(tmp_path / "no such folder" / "s.db")


def test_the_writer_exits_when_its_parent_is_killed(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys, time
        from regio.persistence.store import SQLiteStore
        store = SQLiteStore({str(tmp_path / "s.db")!r}, process=True)
        print(store._process._writer.pid, flush=True)
        time.sleep(60)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert _alive(child)
    parent.kill()
    parent.wait(10)
    assert _gone(child)


def test_the_writers_cpu_is_counted_for_the_thread_whose_transactions_it_ran(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "s.db", process=True)
    before = writer_cpu()
    for n in range(20):
        store.save(f"s{n}", _records(0), expected=0)
    spent = writer_cpu() - before
    assert spent > 0
    seen: list[float] = []
    other = threading.Thread(target=lambda: seen.append(writer_cpu()))
    other.start()
    other.join()
    assert seen == [0.0]  # another thread's counter holds only its own writes
    store.close()


def test_a_retry_after_a_dead_child_answers_with_the_new_childs_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first send finds the child gone after its reader failed the call it had
    registered: the retry on a new child must not hand back that failure."""
    store, writer, first = _opened(tmp_path)
    real = _Link.send

    def dead_once(link: _Link, call_id: int, call: object, work: bytes) -> bool:
        monkeypatch.setattr(_Link, "send", real)
        call.out = (None, EOFError(), 0.0)  # type: ignore[attr-defined]
        call.done.set()  # type: ignore[attr-defined]
        link.alive = False
        return False

    monkeypatch.setattr(_Link, "send", dead_once)
    assert store.try_lease("s", "tok", 30.0) is None  # committed, and said so
    assert writer.pid not in (None, first)
    assert store.try_lease("s", "other", 30.0) is not None
    store.close()


def _interrupt_next_send(link: _Link) -> None:
    """The link's next send writes half its message, then is interrupted (Ctrl-C)."""
    real = link.conn.send_bytes

    def half(data: bytes) -> None:
        link.conn.send_bytes = real  # type: ignore[method-assign]
        os.write(link.conn.fileno(), len(data).to_bytes(4, "big") + data[: len(data) // 2])
        raise KeyboardInterrupt

    link.conn.send_bytes = half  # type: ignore[method-assign,assignment]


def test_a_send_interrupted_part_way_ends_that_child_and_the_next_write_lands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, writer, first = _opened(tmp_path)
    link = writer._link
    assert link is not None
    _interrupt_next_send(link)
    with pytest.raises(KeyboardInterrupt):
        store.try_lease("s", "tok", 30.0)
    assert _gone(first)  # the stream was cut: that child ended
    assert store.try_lease("s", "tok", 30.0) is None  # within a new child, answered
    store.close()


def test_a_write_whose_function_the_child_cannot_import_fails_alone(tmp_path: Path) -> None:
    store, writer, first = _opened(tmp_path)
    here_only = types.ModuleType("regio_test_module_only_in_the_parent")

    def write(db: object) -> int:
        return 1

    write.__module__ = here_only.__name__
    write.__qualname__ = "write"
    here_only.write = write  # type: ignore[attr-defined]
    sys.modules[here_only.__name__] = here_only
    try:
        with pytest.raises(ModuleNotFoundError, match="regio_test_module_only_in_the_parent"):
            writer.run(write)
    finally:
        del sys.modules[here_only.__name__]
    assert writer.pid == first  # the child lives on
    assert store.try_lease("s", "tok", 30.0) is None
    store.close()


def test_a_write_that_does_not_pickle_is_refused_with_nothing_sent(tmp_path: Path) -> None:
    store, writer, first = _opened(tmp_path)
    with pytest.raises(SessionStoreError, match="cannot be passed to the writer process"):
        writer.run(_sleeping, threading.Lock())
    assert writer.pid == first and store.try_lease("s", "tok", 30.0) is None
    store.close()


def test_a_forked_process_never_uses_its_parents_writer(tmp_path: Path) -> None:
    store, writer, first = _opened(tmp_path)
    pid = os.fork()
    if pid == 0:  # the forked child: its write must be refused, nothing sent
        code = 1
        try:
            store.try_lease("s", "forked", 30.0)
        except StoreUnavailableError as exc:
            code = 0 if "forked from" in str(exc) else 2
        except BaseException:
            code = 3
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.try_lease("s", "tok", 30.0) is None  # the parent's writer still serves it
    assert writer.pid == first
    store.close()


def test_an_interrupted_send_leaves_the_calls_already_sent_answered(tmp_path: Path) -> None:
    store, writer, first = _opened(tmp_path)
    link = writer._link
    assert link is not None
    got: list[object] = []
    other = threading.Thread(target=lambda: got.append(writer.run(_sleeping, 1.0)))
    other.start()
    time.sleep(0.3)  # its call is in the child
    _interrupt_next_send(link)
    with pytest.raises(KeyboardInterrupt):
        store.try_lease("s", "tok", 30.0)
    other.join(10)
    assert got == [1.0]  # answered, not "may or may not have been committed"
    assert _gone(first)
    store.close()


def test_a_forked_process_opens_its_own_writer_and_closing_the_inherited_store_spares_it(
    tmp_path: Path,
) -> None:
    store, writer, first = _opened(tmp_path)
    with writer._lock:  # held by a thread at the moment of the fork
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                mine = SQLiteStore(tmp_path / "s.db", process=True)
                store.close()  # the inherited store: neither waits for the held lock nor
                assert mine.try_lease("s", "forked", 30.0) is None  # closes the new writer
                mine.close()
                code = 0
            except BaseException:
                code = 2
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.try_lease("s", "tok", 30.0) is not None  # the forked process's lease holds
    assert writer.pid == first
    store.close()


def _refuse() -> None:
    raise ValueError("cannot be rebuilt")


class _Unloadable:
    """Pickles, but does not load back."""

    def __reduce__(self) -> tuple[object, tuple[()]]:
        return (_refuse, ())


@pytest.mark.parametrize("ok", [True, False])
def test_an_answer_that_would_not_load_in_the_caller_comes_back_as_an_error(ok: bool) -> None:
    call, back, value, cpu = pickle.loads(_answer((7, ok, _Unloadable(), 0.5)))
    assert (call, back, cpu) == (7, False, 0.5)
    assert isinstance(value, RuntimeError) and "cannot be rebuilt" in str(value)
    assert pickle.loads(_answer((8, True, 3, 0.0))) == (8, True, 3, 0.0)
