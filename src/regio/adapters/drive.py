"""The adapters' engine calls, sync or async: one step generator per hook, two drivers.

A framework calls an adapter's hook from its sync loop or its async one (LangChain's
``wrap_model_call`` / ``awrap_model_call``, the Agents SDK's async session). Each engine call a
hook makes that can end in a summary (``add_message``, ``request``, ``write``,
``handle_tool_call``: the engine's summarizing entries, :mod:`regio.engine._asyncentries`) is
yielded as an :class:`EngineCall` from one step generator; :func:`run` makes it with the sync
entry, :func:`arun` awaits its ``a``-prefixed twin, so an async summarizer is awaited from an
async hook instead of refused (a sync entry refuses it: a ``compaction_rejected`` event, and
after three strikes the engine evicts unsummarized). The call's value is sent back into the
generator, its exception thrown into it (where the hook may catch it, as
:func:`regio.adapters.admit.admit_steps` catches ``RegionFullError``).

Usage::

    def hook_steps(engine, message) -> Steps[None]:
        yield EngineCall("add_message", (message,))

    run(engine, hook_steps(engine, message))          # from a sync hook
    await arun(engine, hook_steps(engine, message))   # from an async hook
"""

from __future__ import annotations

from collections.abc import Awaitable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from regio.drive import adrive, drive

if TYPE_CHECKING:
    from regio.engine import Engine

__all__ = ["EngineCall", "Steps", "arun", "run"]

T = TypeVar("T")


@dataclass(frozen=True)
class EngineCall:
    """One engine call: ``name`` of its sync entry (``add_message``, ``request``, ...; the
    async driver awaits ``"a" + name``), its positional ``args`` and keyword ``kwargs``."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


#: A hook's engine calls: yields each :class:`EngineCall`, receives its value, returns the hook's.
Steps = Generator[EngineCall, Any, T]


def run(engine: Engine, steps: Steps[T]) -> T:
    """Make each call of ``steps`` with the engine's sync entry (:func:`regio.drive.drive`);
    returns what ``steps`` returns and raises what it raises."""
    return drive(steps, lambda call: getattr(engine, call.name)(*call.args, **call.kwargs))


async def arun(engine: Engine, steps: Steps[T]) -> T:
    """:func:`run` awaiting the engine's async twin of each call (``"a" + name``;
    :func:`regio.drive.adrive`)."""

    def entry(call: EngineCall) -> Awaitable[Any]:
        return getattr(engine, "a" + call.name)(*call.args, **call.kwargs)

    return await adrive(steps, entry)
