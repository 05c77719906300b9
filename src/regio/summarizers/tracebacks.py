"""Stack traces in text: which lines of a text belong to a Python or JavaScript stack trace
(:func:`trace_mask`), whether a text opens with one (:func:`opens_with_trace`), and the one
line that carries a trace's information (:func:`condense`).

Python (the exception line comes last, the innermost frame is the last one)::

    Traceback (most recent call last):
      File "src/app.py", line 12, in main
        total = 1 / count
                ~~^~~~~~~
    ZeroDivisionError: division by zero

JavaScript (the exception line comes first, the innermost frame is the first one)::

    TypeError: x is not a function
        at run (src/app.js:12:5)
        at main (src/main.js:3:1)

The ``Traceback (most recent call last):`` header carries no information; the exception line
and the innermost frame's location do. :func:`condense` replaces each trace by
``<exception line> (at <file>:<line>, in <function>)``. Only a line as it stands is a trace
line: a quoted one (``- Traceback ...``, ``tool: Traceback ...``) is not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["condense", "opens_with_trace", "trace_mask"]

_HEADER = re.compile(r"^\s*Traceback \(most recent call last\):?\s*$")
_PY_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+?))?\s*$')
_JS_FRAME = re.compile(
    r"^\s*at (?:(?P<func>[\w$.<>\[\] ]+?) \((?P<loc>[^()]*:\d+(?::\d+)?)\)"
    r"|(?P<bare>[^\s()]+:\d+(?::\d+)?))\s*$"
)
_CHAIN = re.compile(
    r"^\s*(?:During handling of the above exception, another exception occurred"
    r"|The above exception was the direct cause of the following exception):?\s*$"
)
#: A Python exception line: ``KeyError: 1``, ``pkg.mod.Failure: msg``, ``StopIteration``.
_PY_EXCEPTION = re.compile(r"^\s*[A-Za-z_][\w.]*(?::\s.*|:)?\s*$")
#: A JavaScript exception line (before its frames): ``TypeError: x``, ``Error: boom``.
_JS_EXCEPTION = re.compile(r"^\s*(?:Uncaught\s+)?[A-Za-z_$][\w$.]*(?::\s.*)?$")
_LEAD = re.compile(r"^\W{0,3}")


def _frame(line: str) -> bool:
    return bool(_PY_FRAME.match(line) or _JS_FRAME.match(line))


def opens_with_trace(text: str) -> bool:
    """Whether the first non-blank line of ``text`` (after at most 3 non-word characters) is
    a trace header, a stack frame or a chaining line."""
    for line in text.splitlines():
        if line.strip():
            rest = _LEAD.sub("", line.strip())
            return bool(_HEADER.match(rest) or _frame(rest) or _CHAIN.match(rest))
    return False


def _python_end(lines: Sequence[str], start: int) -> tuple[int, int | None, int | None]:
    """A Python trace whose header is ``lines[start]``: ``(end, innermost frame index,
    exception line index)``, ``end`` exclusive."""
    i, frame, after_frame = start + 1, None, False
    while i < len(lines):
        line = lines[i]
        if _PY_FRAME.match(line):
            frame, after_frame = i, True
        elif after_frame and line[:1].isspace() and line.strip():  # source line, carets
            pass
        else:
            break
        i += 1
    if i < len(lines) and lines[i].strip() and _PY_EXCEPTION.match(lines[i]):
        return i + 1, frame, i
    return i, frame, None


def _js_end(lines: Sequence[str], start: int) -> int:
    """End (exclusive) of the ``at`` frames after ``lines[start]``."""
    i = start + 1
    while i < len(lines) and _JS_FRAME.match(lines[i]):
        i += 1
    return i


def _spans(lines: Sequence[str]) -> list[tuple[int, int, int | None, int | None]]:
    """Traces of ``lines``: ``(start, end, innermost frame, exception line)`` each."""
    out: list[tuple[int, int, int | None, int | None]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _HEADER.match(line):
            end, frame, exc = _python_end(lines, i)
            out.append((i, end, frame, exc))
            i = end
        elif _JS_EXCEPTION.match(line) and i + 1 < len(lines) and _JS_FRAME.match(lines[i + 1]):
            end = _js_end(lines, i)
            out.append((i, end, i + 1, i))
            i = end
        elif _frame(line) or _CHAIN.match(line):
            end = i + 1
            while end < len(lines) and (_frame(lines[end]) or _CHAIN.match(lines[end])):
                end += 1
            out.append((i, end, None, None))
            i = end
        else:
            i += 1
    return out


def trace_mask(lines: Sequence[str]) -> list[bool]:
    """For each of ``lines``, whether it belongs to a stack trace as it stands: a header, a
    frame, a chaining line, a source line under a Python frame, and the trace's exception
    line. A quoted line (``- File ...``) is not a trace line."""
    mask = [False] * len(lines)
    for start, end, _, _ in _spans(lines):
        for i in range(start, end):
            mask[i] = True
    return mask


def _location(line: str) -> str:
    py = _PY_FRAME.match(line)
    if py:
        func = py.group("func")
        return f"{py.group('file')}:{py.group('line')}" + (f", in {func}" if func else "")
    js = _JS_FRAME.match(line)
    if js is None:
        return line.strip()
    if js.group("bare"):
        return js.group("bare")
    return f"{js.group('loc')}, in {js.group('func')}"


def condense(lines: Sequence[str], limit: int) -> list[tuple[str, bool]]:
    """``lines`` with each stack trace replaced by one line, ``(line, is_trace)`` each: the
    exception line and the innermost frame's location, ``ZeroDivisionError: division by zero
    (at x.py:1, in <module>)`` (the exception line alone when that is over ``limit``
    characters; ``Traceback at <location>`` for a trace cut before its exception line). A
    trace with neither a frame nor an exception line, and every other line, is kept as it is
    (``is_trace`` false)."""
    out: list[tuple[str, bool]] = []
    i = 0
    for start, end, frame, exc in _spans(lines):
        out.extend((line, False) for line in lines[i:start])
        i = end
        where = _location(lines[frame]) if frame is not None else ""
        if exc is None and not where:
            out.extend((line, False) for line in lines[start:end])
            continue
        head = lines[exc].strip() if exc is not None else "Traceback"
        line = f"{head} (at {where})" if where else head
        out.append((line if len(line) <= limit else head, True))
    out.extend((line, False) for line in lines[i:])
    return out
