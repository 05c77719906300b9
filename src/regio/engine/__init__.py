"""The engine: :class:`Engine`, the front an agent loop drives, and the calls it forwards to
its parts (``docs/runtime.md``). What one session holds is :mod:`regio.session`; compaction is
:mod:`regio.compaction`, the relief chain :mod:`regio.compaction.relief`, saving
:mod:`regio.persistence`.

Modules:

* ``_engine`` -- :class:`Engine`: builds the parts and forwards each call;
* ``_saving`` -- ``save`` / ``load`` / ``save_to`` / ``load_from`` (regio.persistence);
* ``_asyncentries`` -- the ``a``-prefixed twin of every call that can end in a summary;
* ``_parts`` -- the options an engine hands to each part;
* ``_from_blueprint`` -- engine options from a blueprint (``Engine.from_blueprint``);
* ``_requests`` -- ``request`` (flush, layout, ceiling, renderer) and ``observe`` (usage);
* ``_recovery`` -- overflow recovery: one compaction and one retry (:class:`RetryToken`);
* ``_messages`` -- admitting a conversation message (``Engine.add_message``);
* ``_turnfit`` -- a turn that fits the window is never refused;
* ``_streaming`` -- :class:`AssistantStream`: a streamed assistant turn;
* ``_tools`` -- the context tools' handler (:class:`ContextToolOutcome`);
* ``_history``, ``_repairs`` -- :func:`repair_history` and ``Engine.repair``;
* ``_snapshot`` -- ``Engine.snapshot()`` (:class:`EngineSnapshot`, :class:`RegionSnapshot`);
* ``_inspect`` -- ``regio inspect STATE_FILE``;
* ``_repair_cli`` -- ``regio repair TARGET`` (a stored session, a state file or a trace).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from regio._lazy import lazy_exports

if TYPE_CHECKING:
    from ._engine import Engine
    from ._history import HistoryRepair, HistoryRepaired, repair_history
    from ._recovery import RetryToken
    from ._snapshot import EngineSnapshot, RegionSnapshot
    from ._streaming import AssistantStream
    from ._tools import ContextToolOutcome

#: Public name -> the module that defines it (imported on first use).
_EXPORTS: dict[str, str] = {
    "AssistantStream": "._streaming",
    "ContextToolOutcome": "._tools",
    "Engine": "._engine",
    "EngineSnapshot": "._snapshot",
    "HistoryRepair": "._history",
    "HistoryRepaired": "._history",
    "RegionSnapshot": "._snapshot",
    "RetryToken": "._recovery",
    "repair_history": "._history",
}

__all__ = [
    "AssistantStream",
    "ContextToolOutcome",
    "Engine",
    "EngineSnapshot",
    "HistoryRepair",
    "HistoryRepaired",
    "RegionSnapshot",
    "RetryToken",
    "repair_history",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
