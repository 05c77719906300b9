"""Drivers of step generators: the one place where a generator's jobs meet sync or async code.

A step generator yields jobs, receives each job's answer and returns a result; when a job
fails, its exception is thrown into the generator at the ``yield`` (which may handle it or let
it propagate). :func:`drive` answers jobs with a plain function, :func:`adrive` awaits an async
one, so the rules live once, in the generator (the compaction flush, hierarchical
summarization, the agent loop's run).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import TypeVar

__all__ = ["adrive", "drive"]

J = TypeVar("J")
A = TypeVar("A")
R = TypeVar("R")


def drive(steps: Generator[J, A, R], answer: Callable[[J], A]) -> R:
    """Run ``steps`` to its result, answering each job with ``answer(job)``."""
    try:
        job = next(steps)
        while True:
            try:
                reply = answer(job)
            except Exception as exc:
                job = steps.throw(exc)
                continue
            job = steps.send(reply)
    except StopIteration as stop:
        return stop.value


async def adrive(steps: Generator[J, A, R], answer: Callable[[J], Awaitable[A]]) -> R:
    """:func:`drive` awaiting ``answer(job)``."""
    try:
        job = next(steps)
        while True:
            try:
                reply = await answer(job)
            except Exception as exc:
                job = steps.throw(exc)
                continue
            job = steps.send(reply)
    except StopIteration as stop:
        return stop.value
