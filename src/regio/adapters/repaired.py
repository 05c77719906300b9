"""The adapters' requests: a broken history is repaired before the model gets it.

A framework can hand an adapter a history no provider accepts (a tool call whose result never
came, a result whose call is gone, a call id used twice), and the engine's own session can hold
one (a call recorded before the process stopped). Every adapter admits what it receives as it
is (the session's transcript keeps it) and lays the window out with :func:`repaired_request`:
``engine.request(...)``, and when the layout had to repair the history on the way (its
render-time repair, :mod:`regio.layout.repair`, synthesized a result or dropped a result or a
call: :func:`needs_repair`), :meth:`regio.engine.Engine.repair` repairs the engine's
conversation itself (the rules of :func:`regio.engine.repair_history`: an orphaned call closed
with an error result saying it was interrupted, an orphaned result out of the window, a reused
id renamed; each change a :class:`regio.engine.HistoryRepaired` event) and the window is laid
out again. A valid history costs nothing more than the one request (the render-time repair
reports only placement for it: results moved after their call, messages merged).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from regio.layout.events import OrphanResultDropped, Repaired, ResultSynthesized

from .drive import EngineCall, Steps, arun, run

if TYPE_CHECKING:
    from regio.engine import Engine
    from regio.layout import Request

__all__ = ["arepaired_request", "needs_repair", "repaired_request", "repaired_steps"]

#: The render-time repairs that change what the history says (the others place it).
_HISTORY_REPAIRS = frozenset({"duplicate_result_dropped", "duplicate_call_dropped"})


def needs_repair(engine: Engine) -> bool:
    """Whether the engine's last laid-out request needed the render-time repair to change the
    history (a result synthesized for a call without one, a result without its call or a
    duplicated call or result dropped), so :meth:`regio.engine.Engine.repair` has work."""
    last = engine.state.last_request
    for event in last.events if last is not None else ():
        if isinstance(event, ResultSynthesized | OrphanResultDropped):
            return True
        if isinstance(event, Repaired) and event.action in _HISTORY_REPAIRS:
            return True
    return False


def repaired_request(engine: Engine, *args: Any, **kwargs: Any) -> tuple[Request, dict[str, Any]]:
    """``engine.request(*args, **kwargs)`` (``(request, payload)``), laid out again after
    :meth:`regio.engine.Engine.repair` when the history needed it (module doc)."""
    return run(engine, repaired_steps(engine, *args, **kwargs))


async def arepaired_request(
    engine: Engine, *args: Any, **kwargs: Any
) -> tuple[Request, dict[str, Any]]:
    """:func:`repaired_request` awaiting ``engine.arequest`` (an async summarizer's flush)."""
    return await arun(engine, repaired_steps(engine, *args, **kwargs))


def repaired_steps(
    engine: Engine, *args: Any, **kwargs: Any
) -> Steps[tuple[Request, dict[str, Any]]]:
    """The engine calls of :func:`repaired_request` (:mod:`regio.adapters.drive`)."""
    out = yield EngineCall("request", args, kwargs)
    if needs_repair(engine) and engine.repair():
        out = yield EngineCall("request", args, kwargs)
    return out
