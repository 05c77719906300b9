"""The relief chain: cheap moves before summarization (``EngineOptions.relief``,
``docs/relief.md``); the rules are :mod:`regio.policies.relief`.

Modules:

* ``_chain`` -- the chain under token pressure: dedupe, clear, trim, restore;
* ``_originals`` -- the originals of relieved results: ``with_originals``, ``restore``;
* ``_cut`` -- where the chain clears around a summary;
* ``_kept`` -- what a summary reads of the results ``keep_last`` kept verbatim;
* ``_admit`` -- tool results on admission (route, ``max_result_tokens``);
* ``_extract`` -- what a cleared result's placeholder keeps;
* ``_memo`` -- the edits one flush has worked out;
* ``ReliefBook`` (stage tallies and the originals) is session state, kept in
  :mod:`regio.session._reliefbook`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from regio._lazy import lazy_exports

if TYPE_CHECKING:
    from regio.session._reliefbook import ReliefBook

#: Public name -> the module that defines it (imported on first use).
_EXPORTS: dict[str, str] = {
    "ReliefBook": "regio.session._reliefbook",
}

__all__ = [
    "ReliefBook",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
