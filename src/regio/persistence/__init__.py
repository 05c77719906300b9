"""Saving and loading engines: state files (``Engine.save`` / ``Engine.load``) and
session stores (:mod:`regio.persistence.store`, ``Engine.save_to`` / ``Engine.load_from``).

Modules:

* ``_statefile`` -- the state file (:class:`EngineState`) and :func:`save_engine`;
* ``_load`` -- :func:`load_engine`: reading and restoring a state file;
* ``_savedconfig`` -- the options a state file records;
* ``_stateread`` -- a state file's transcript decoded on first use;
* ``_statescan`` -- a state file's nesting depth, measured before it is decoded;
* ``_tempfiles`` -- the temporary files of an atomic save;
* ``_lostparts`` -- what a save keeps of a session whose store lost parts;
* ``_engineparts`` -- what a save reads of an engine (the :class:`EngineParts` protocol);
* ``store`` -- session stores (SQLite, Redis) by id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from regio._lazy import lazy_exports

if TYPE_CHECKING:
    from ._load import load_engine
    from ._statefile import EngineState, save_engine

#: Public name -> the module that defines it (imported on first use).
_EXPORTS: dict[str, str] = {
    "EngineState": "._statefile",
    "load_engine": "._load",
    "save_engine": "._statefile",
}

__all__ = [
    "EngineState",
    "load_engine",
    "save_engine",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
